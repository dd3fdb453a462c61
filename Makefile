# FlexTrain NPU — build, simulate, test.
#   make sim    [CONFIG=small]   build the model (once per config) and run the demo GEMM with a trace
#   make test                    Criterion: host unit tests + RTL tests at tiny, small and the bf16 configs
#   make lint                    verilator --lint-only -Wall on every config
#   make bf16-check              the bf16 arithmetic units' RTL against their C model (in make test)
#   make bench  [CONFIG=small]   simulated cycles per second and utilization (reproducible)
#   make workloads [CONFIG=small] every shipped topology at full size on the RTL, per-network tables
#   make conv-slice-nets         burst-aware vs bytes-only slicing of every network's conv layers (RTL, ~1 h)
#   make synth  [CONFIG=small]   Yosys area and logic-depth estimates (synth.mk)
# Everything a config needs is generated from configs/<config>.cfg into build/<config>/.

CONFIG   ?= small
CONFIGS  := $(sort $(basename $(notdir $(wildcard configs/*.cfg))))
ifeq ($(wildcard configs/$(CONFIG).cfg),)
$(error unknown CONFIG '$(CONFIG)': configs/ has $(CONFIGS))
endif
TEST_CONFIGS := tiny small tiny-bf16 small-bf16 small-w2 tiny-nopipe
# The RTL suites a bf16 configuration runs (Criterion --filter, extended glob): all but those whose
# checks are int16 only (conv, conv_isa, fcov: int16 conv goldens, conv_bf16 runs the convolutions
# against the order-matched conv golden; modes and policies: hand-made programs checked against the
# int16 golden) or too long for the bf16 models (train, train_part: their bf16_* tests run the fused
# orders and every partitioning on small shapes, bit-exact against the order-matched fused golden,
# ref/bwd_golden_bf16.h; bf16/train_seq the sequential form). small-bf16 runs the bf16, conv_bf16
# and conv_bwd suites (random GEMMs and convolutions, the fused conv backward, specials, DRAIN
# narrow, training), the training suites' bf16_* tests and the vector unit's and the step
# engine's: its model simulates ~4x slower than small's (fp32 adders in every PE).
# docs/datapath.md section 6.
TEST_FILTER_BF16 := @(!(@(conv|conv_isa|fcov|modes|policies|train|train_part))/*|@(train|train_part)/bf16_*)
TEST_FILTER_small-bf16 := @(@(bf16|conv_bf16|conv_bwd|vec|vec_errors|vec_order|step)/*|@(train|train_part)/bf16_*)
# small-w2 (two SPM words per DRAM beat, issue 14) runs every suite. tiny-nopipe (tiny with the
# LOAD engine one descriptor at a time, LOAD_PIPELINE = 0, docs/memory.md "Pipelined LOADs") runs
# every suite but policies and train_part (the array's mapping policies and the training
# partitions, a minute and a half of the budget, which the LOAD engine's mode does not change): it
# keeps the non-pipelined engine and its cost model (XFER_IDLE = 0) under test.
TEST_FILTER_tiny-nopipe := @(!(@(policies|train_part))/*)
# tiny and small run every suite.
test_filter = $(if $(or $(TEST_FILTER_$(1)),$(findstring -bf16,$(1))),--filter '$(or $(TEST_FILTER_$(1)),$(TEST_FILTER_BF16))')
B        := build/$(CONFIG)
CC       ?= gcc
CXX      ?= g++
CSTD     := -std=c99 -Wall -Wextra -Werror -O2 -g
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)

# The RTL, in dependency order: rtl/npu.f (// comments), every rtl/*.v listed there.
RTL      := $(shell sed -e 's://.*$$::' rtl/npu.f)
RTL_MISSING := $(filter-out $(RTL),$(wildcard rtl/*.v))
ifneq ($(RTL_MISSING),)
$(error rtl/npu.f does not list $(RTL_MISSING))
endif
# The bf16 arithmetic units (issue 15), npu_pe whose BF16 = 1 MAC they are, the narrow DRAIN and the
# vector unit's fp32 multiplier (the bf16 configs elaborate them).
BF16_RTL := rtl/npu_bf16_mul.v rtl/npu_fp32_add.v rtl/npu_fp32_to_bf16.v rtl/npu_fp32_mul.v rtl/npu_pe.v \
            rtl/npu_drain_narrow.v
# sw/ by role (sw/README.md): every folder but cli/ and tools/ is the host library.
HOST_SRC := $(sort $(shell find sw -name '*.c' -not -path 'sw/cli/*' -not -path 'sw/tools/*'))
HOST_HDR := $(sort $(shell find sw -name '*.h'))
# The C functional ISA model: the second implementation of tb/npu_sim.h (unit tests, fuzz).
FUNCSIM_SRC := tb/npu_funcsim.c tb/npu_funcsim_exec.c
FUNCSIM  := $(FUNCSIM_SRC) tb/npu_funcsim.h tb/npu_funcsim_int.h
CLI_SRC  := $(wildcard sw/cli/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)
RTLT_SRC := $(wildcard tests/rtl/*.c)

VERILATOR ?= verilator
# Harness hooks, compiled into the model, the Verilator runtime and tb/npu_sim.cpp alike: $display
# goes through npu_sim_vl_printf (keeps the NPU_ASSERT message), $finish does not exit the process.
VHOOKS   := -DVL_USER_FINISH -DVL_PRINTF=npu_sim_vl_printf -include $(CURDIR)/tb/npu_sim_hooks.h
VFLAGS   := --cc -O3 --x-assign fast --x-initial fast --noassert --trace-fst \
            --prefix Vnpu_top --top-module npu_top -Wno-fatal \
            $(foreach f,$(VHOOKS),-CFLAGS $(f))
# The NPU models (CLI, tests, bench) include the RTL's invariant checks (rtl/npu_assert.vh); the
# bare-array speed reference does not. NPU_ASSERTS=0 builds models without them (same build dir:
# `make clean` or delete build/<config>/libnpusim.a when switching).
NPU_ASSERTS ?= 1
VASSERT  := $(if $(filter 1,$(NPU_ASSERTS)),+define+NPU_ASSERTS)
# The model is compiled with -O2 by Verilator's own makefile (OPT_FAST).
VMAKE_OPT := OPT_FAST="-O2 -fno-stack-protector" OPT_SLOW="-O1" OPT_GLOBAL="-O2"

.PHONY: sweep-validate
.PHONY: slice-check slice-fidelity slice-fidelity-quick step-fidelity step-fidelity-quick conv-slice-quick conv-slice-nets bf16-check plots
.PHONY: all sim test test-asan lint lint-all lint-deps perf-check perf-baseline bench workloads deps clean model cli unit-tests help regress fuzz-npu fcov-report
.DELETE_ON_ERROR:
# Generated headers and model libraries are intermediate files of pattern rules: keep them.
.SECONDARY:

all: cli

help:
	@sed -n '1,10p' Makefile

# ----------------------------------------------------------------------------- dependencies
# Installs what is missing (Debian packages) or says clearly what to install.
# $(call APT_INSTALL,WHO): shell text that installs the Debian packages listed in $$missing (as root,
# or via sudo) or stops naming them. deps, lint-deps and synth-deps share it.
APT_INSTALL = if [ -n "$$missing" ]; then echo "$(1): installing missing Debian packages:$$missing"; \
  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
  ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing ) \
  || { echo "$(1): could not install:$$missing -- install them by hand (apt-get install$$missing)"; exit 1; }; fi
DEPS_STAMP := build/.deps-ok
# Debian's python3, where python3-numpy (tests/npy_checks.py) and python3-matplotlib (make plots)
# install; a python3 earlier on PATH (pyenv, venv) may not have them.
PY_NUMPY ?= /usr/bin/python3
deps: $(DEPS_STAMP)
# The stamp depends on the Makefile: a dependency added here is checked on the next build.
$(DEPS_STAMP): Makefile
	@mkdir -p build
	@missing=""; \
	command -v $(VERILATOR) >/dev/null 2>&1 || missing="$$missing verilator"; \
	command -v $(CXX) >/dev/null 2>&1 || missing="$$missing g++"; \
	[ -f /usr/include/criterion/criterion.h ] || missing="$$missing libcriterion-dev"; \
	[ -f /usr/include/zlib.h ] || missing="$$missing zlib1g-dev"; \
	[ -f /usr/include/cjson/cJSON.h ] || missing="$$missing libcjson-dev"; \
	$(PY_NUMPY) -c 'import numpy' >/dev/null 2>&1 || missing="$$missing python3-numpy"; \
	$(PY_NUMPY) -c 'import matplotlib' >/dev/null 2>&1 || missing="$$missing python3-matplotlib"; \
	$(call APT_INSTALL,deps); \
	touch $@

# ----------------------------------------------------------------------------- generated config
build/gencfg: sw/tools/gencfg.c sw/hw/npu_defs.h | $(DEPS_STAMP)
	@mkdir -p build
	$(CC) $(CSTD) -o $@ $<

# gencfg rewrites a file only when its content changes, so a model is rebuilt only when the
# configuration or the shared names really change (make re-reads the files' times).
GEN_FILES = build/%/verilator.f build/%/npu_defs.vh build/%/npu_params.h
$(GEN_FILES): configs/%.cfg build/gencfg
	@mkdir -p $(@D)
	build/gencfg $< $(@D)
# configs/<config>.calib (`npu calibrate --out`, the slicing stage's fitted cost constants) goes
# into npu_params.h only. The Verilated model reads verilator.f and npu_defs.vh alone, so a new
# calibration rebuilds the C++ harness and the host programs, never the model.
$(foreach c,$(CONFIGS),$(if $(wildcard configs/$(c).calib),$(eval build/$(c)/npu_params.h: configs/$(c).calib)))
VGEN_FILES = build/%/verilator.f build/%/npu_defs.vh

# ----------------------------------------------------------------------------- Verilated model
# One static library per config: model + Verilator runtime + the C++ harness (C API).
VINC = -I$$($(VERILATOR) --getenv VERILATOR_ROOT)/include -I$$($(VERILATOR) --getenv VERILATOR_ROOT)/include/vltstd
TB_DEPS := tb/npu_sim.cpp tb/npu_sim.h tb/npu_sim_hooks.h tb/dram_model.c tb/dram_model.h
# $(call verilate_npu,CONFIG,OUTDIR,EXTRA_VERILATOR_FLAGS): the Verilated model $(OUTDIR)/obj
# (depends on the RTL only); $(call harness_lib,CONFIG,OUTDIR): the C++ harness and the DRAM model
# beside it, archived into $(OUTDIR)/libnpusim.a (a harness change does not re-verilate).
define verilate_npu
	rm -rf $(2)/obj
	$(VERILATOR) $(VFLAGS) $(VASSERT) $(3) -f build/$(1)/verilator.f -Ibuild/$(1) -Irtl $(RTL) --Mdir $(2)/obj
	$(MAKE) -s -j$(JOBS) -C $(2)/obj -f Vnpu_top.mk $(VMAKE_OPT) \
	    Vnpu_top__ALL.a verilated.o verilated_fst_c.o verilated_threads.o
endef
define harness_lib
	$(CXX) -O2 -g -std=c++14 -DNPU_TRACE $(VHOOKS) -Ibuild/$(1) -I$(2)/obj -Itb $(VINC) \
	    -c tb/npu_sim.cpp -o $(2)/npu_sim.o
	$(CC) $(CSTD) -Ibuild/$(1) -Itb -c tb/dram_model.c -o $(2)/dram_model.o
	rm -f $(2)/libnpusim.a && ar rcs $(2)/libnpusim.a $(2)/obj/*.o $(2)/npu_sim.o $(2)/dram_model.o
endef
build/%/obj/Vnpu_top__ALL.a: $(VGEN_FILES) $(RTL) rtl/npu.f $(wildcard rtl/*.vh)
	@echo "== verilating config $* (once per config)"
	$(call verilate_npu,$*,build/$*,)
build/%/libnpusim.a: build/%/obj/Vnpu_top__ALL.a $(TB_DEPS) build/%/npu_params.h
	$(call harness_lib,$*,build/$*)

# The planted bug of issue 6: the PLANT_CONFIG model once more with NPU_PLANTED_FAULT (npu_obuf:
# HSW/ISW results of cores 0/1 land one OBUF row too far). `make test` runs
# tests/rtl/test_planted.c on it: the regression must catch the bug with a first-divergence
# report that names the mode and the tile (the same test passes on the real model).
PLANT_CONFIG ?= tiny
build/%/fault/obj/Vnpu_top__ALL.a: $(VGEN_FILES) $(RTL) rtl/npu.f $(wildcard rtl/*.vh)
	@echo "== verilating config $* with the planted bug (NPU_PLANTED_FAULT)"
	@mkdir -p build/$*/fault
	$(call verilate_npu,$*,build/$*/fault,+define+NPU_PLANTED_FAULT)
build/%/fault/libnpusim.a: build/%/fault/obj/Vnpu_top__ALL.a $(TB_DEPS) build/%/npu_params.h
	$(call harness_lib,$*,build/$*/fault)
build/%/fault/test_planted: build/%/fault/libnpusim.a build/libnpuhost.a tests/rtl/test_planted.c \
                            tests/rtl/rtl_common.h
	$(CC) $(CSTD) -DNPU_PLANTED_FAULT -Ibuild/$* -Isw -Itb -Itests/rtl -c tests/rtl/test_planted.c \
	    -o build/$*/fault/test_planted.o
	$(CXX) -o $@ build/$*/fault/test_planted.o build/libnpuhost.a build/$*/fault/libnpusim.a \
	    $(SIM_LIBS) -lcriterion

# cJSON (libcjson-dev): the JSON of every command and report (run/out.h); zlib: the digits data
# set's gzip'ed CSV (data/digits.c) and the FST writer
HOST_LIBS := -lcjson -lz -lm
SIM_LIBS := -lpthread $(HOST_LIBS)

# Speed reference for `make bench`: the bare FlexSA array (tb/npu_bench_top.v) behind the same
# harness and flags, so the NPU's speed can be reported as a ratio measured in one run.
build/%/libnpuref.a: $(GEN_FILES) $(RTL) tb/npu_bench_top.v $(TB_DEPS) build/%/libnpusim.a
	rm -rf build/$*/refobj
	$(VERILATOR) $(subst --top-module npu_top,--top-module npu_bench_top,$(VFLAGS)) -f build/$*/verilator.f -Ibuild/$* -Irtl \
	    tb/npu_bench_top.v rtl/npu_flexsa.v rtl/npu_core.v rtl/npu_pe.v --Mdir build/$*/refobj
	$(MAKE) -s -j$(JOBS) -C build/$*/refobj -f Vnpu_top.mk $(VMAKE_OPT) \
	    Vnpu_top__ALL.a verilated.o verilated_fst_c.o verilated_threads.o
	$(CXX) -O2 -g -std=c++14 -DNPU_TRACE $(VHOOKS) -Ibuild/$* -Ibuild/$*/refobj -Itb $(VINC) \
	    -c tb/npu_sim.cpp -o build/$*/refobj/npu_sim_ref.o
	rm -f $@ && ar rcs $@ build/$*/refobj/*.o build/$*/dram_model.o
build/%/bench_array: tests/bench/bench_array.c build/%/libnpuref.a
	$(CC) $(CSTD) -Ibuild/$* -Itb -c $< -o build/$*/bench_array.o
	$(CXX) -o $@ build/$*/bench_array.o build/$*/libnpuref.a $(SIM_LIBS)

# ----------------------------------------------------------------------------- host programs
# The host library does not depend on the config (configs arrive as a runtime struct).
HOST_OBJ := $(patsubst sw/%.c,build/host/%.o,$(HOST_SRC))
build/host/%.o: sw/%.c $(HOST_HDR) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CSTD) -Isw -Itb -Ibuild -c $< -o $@

# The git revision every JSON and CSV of the CLI carries ("rev"): build/npu_rev.h, rewritten only
# when the revision changes (so only cli_common.o is rebuilt); "unknown" outside a git checkout.
NPU_GIT_REV := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
build/npu_rev.h: FORCE
	@mkdir -p build; echo '#define NPU_GIT_REV "$(NPU_GIT_REV)"' > $@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
.PHONY: FORCE
FORCE:
build/host/cli/cli_common.o: build/npu_rev.h
build/libnpuhost.a: $(HOST_OBJ)
	rm -f $@ && ar rcs $@ $^

CLI_LIB_SRC := $(filter-out sw/cli/npu_main.c,$(CLI_SRC))
CLI_LIB_OBJ := $(patsubst sw/%.c,build/host/%.o,$(CLI_LIB_SRC))
build/%/npu: build/%/libnpusim.a build/libnpuhost.a $(CLI_LIB_OBJ) sw/cli/npu_main.c $(wildcard sw/cli/*.h)
	$(CC) $(CSTD) -Ibuild/$* -Isw -Itb -c sw/cli/npu_main.c -o build/$*/npu_main.o
	$(CXX) -o $@ build/$*/npu_main.o $(CLI_LIB_OBJ) build/libnpuhost.a build/$*/libnpusim.a $(SIM_LIBS)

# tests/rtl/test_assert.c skips its fault tests while rtl/ has no checks at all.
NPU_ASSERT_SITES := $(shell cat $(RTL) | grep -c 'NPU_ASSERT_FAIL')
# tests/rtl/test_fuzz.c compares the RTL with the C functional ISA model (tb/npu_funcsim.c),
# linked into the same binary under fnpu_sim_* names.
FAKE_RENAME := $(foreach f,open close dram csr_write csr_read run step cycle trace dram_stats burst_hook \
                 beat_bytes finished assert_msg,-Dnpu_sim_$(f)=fnpu_sim_$(f))
build/%/test_rtl: build/%/libnpusim.a build/libnpuhost.a $(RTLT_SRC) $(wildcard tests/rtl/*.h) \
                  $(FUNCSIM)
	for f in $(RTLT_SRC); do \
	  $(CC) $(CSTD) -DNPU_ASSERT_SITES=$(NPU_ASSERT_SITES) -Ibuild/$* -Isw -Itb -Itests/rtl -c $$f -o build/$*/rtl_$$(basename $$f .c).o || exit 1; done
	for f in $(FUNCSIM_SRC); do \
	  $(CC) $(CSTD) -DNPU_FUNCSIM_USE_PARAMS $(FAKE_RENAME) -Ibuild/$* -Isw -Itb \
	    -c $$f -o build/$*/rtl_$$(basename $$f .c).o || exit 1; done
	$(CXX) -o $@ $(foreach f,$(RTLT_SRC) $(FUNCSIM_SRC),build/$*/rtl_$(basename $(notdir $(f))).o) \
	    build/libnpuhost.a build/$*/libnpusim.a $(SIM_LIBS) -lcriterion

build/test_unit: build/libnpuhost.a $(UNIT_SRC) $(FUNCSIM) $(CLI_LIB_OBJ) $(wildcard tests/unit/*.h) $(HOST_HDR) tests/rtl/conv_cases.h tests/fp/fp_operands.h
	$(CC) $(CSTD) -Isw -Itb -Itests/unit -o $@ $(UNIT_SRC) $(FUNCSIM_SRC) $(CLI_LIB_OBJ) build/libnpuhost.a $(HOST_LIBS) -lcriterion

# The slicing stage (sw/compile/slice/) against its independent brute-force reference
# (tests/slice/ref_slice.py): candidates visited, fitting and the winner on 21 random conv shapes
# and 3 GEMMs. build/slice_dump prints the C search's answers.
build/slice_dump: tests/slice/slice_dump.c build/libnpuhost.a $(HOST_HDR)
	$(CC) $(CSTD) -Isw -Itb -o $@ $< build/libnpuhost.a $(HOST_LIBS)
# The slicing stage's cost model against the RTL (issue 14 acceptance 5): make slice-fidelity.
build/%/slice_fidelity: tests/slice/slice_fidelity.c build/%/libnpusim.a build/libnpuhost.a $(HOST_HDR)
	$(CC) $(CSTD) -Ibuild/$* -Isw -Itb -c $< -o build/$*/slice_fidelity.o
	$(CXX) -o $@ build/$*/slice_fidelity.o build/libnpuhost.a build/$*/libnpusim.a $(SIM_LIBS)
# Burst-aware slicing of conv layers against the RTL (acceptance 6 on conv: compile/conv/conv_slice.h).
build/%/conv_slice_check: tests/slice/conv_slice_check.c build/%/libnpusim.a build/libnpuhost.a $(HOST_HDR)
	$(CC) $(CSTD) -Ibuild/$* -Isw -Itb -c $< -o build/$*/conv_slice_check.o
	$(CXX) -o $@ build/$*/conv_slice_check.o build/libnpuhost.a build/$*/libnpusim.a $(SIM_LIBS)
# make test's representative: every candidate of the c1 layer of tests/topologies/conv_small.csv
# (fwd, dX and dW both ways) on the RTL; the pick within 5% of the best, <= 1.01x the bytes-only pick.
conv-slice-quick: build/small/conv_slice_check
	@echo "== conv slicing: the pick against every candidate on the RTL (make bench for the set)"
	@build/small/conv_slice_check --all --no-half 4,10,10,8,3,3,1,1,1 > build/conv-slice-quick.log \
	  || { cat build/conv-slice-quick.log; exit 1; }
	@grep -E "^conv slicing|more than" build/conv-slice-quick.log
# Acceptance 6 on conv at full size: every distinct layer of the conv topologies in
# ../shared/workloads, batch 1, burst-aware against bytes-only pick on the RTL (about an hour on
# two cores; build/small/conv-slice-<net>.log per network, the summary on stdout).
conv-slice-nets: build/small/conv_slice_check
	tests/slice/conv_slice_nets.sh build/small
slice-fidelity: $(B)/slice_fidelity
	$(B)/slice_fidelity
# make test's representative: three smaller layers, 12 candidates each (about 15 s of CPU).
slice-fidelity-quick: build/small/slice_fidelity
	@echo "== slicing cost model vs the RTL, quick (make slice-fidelity for the full set)"
	@build/small/slice_fidelity --pick 12 256,64,192 128,128,128 1024,24,24 > build/slice-fidelity-quick.log \
	  || { cat build/slice-fidelity-quick.log; exit 1; }
	@tail -1 build/slice-fidelity-quick.log
# The estimator's step plan mode against the RTL step engine (issue 16 acceptance 1, 2, 5;
# docs/estimator.md section 7): make step-fidelity sweeps 26 MLPs and 6 CNNs with their batches at
# tiny-bf16, small-bf16, tiny and small (the int16 step: the same kernels in fixed point; 128 points),
# writing build/step-fidelity-<config>.csv.
build/%/step_fidelity: tests/est/step_fidelity.c build/%/libnpusim.a build/libnpuhost.a $(HOST_HDR)
	$(CC) $(CSTD) -Ibuild/$* -Isw -Itb -c $< -o build/$*/step_fidelity.o
	$(CXX) -o $@ build/$*/step_fidelity.o build/libnpuhost.a build/$*/libnpusim.a $(SIM_LIBS)
STEP_FIDELITY_CONFIGS := tiny-bf16 small-bf16 tiny small
step-fidelity: $(foreach c,$(STEP_FIDELITY_CONFIGS),build/$(c)/step_fidelity)
	@fail=0; for c in $(STEP_FIDELITY_CONFIGS); do \
	  build/$$c/step_fidelity --csv build/step-fidelity-$$c.csv > build/step-fidelity-$$c.log; r=$$?; \
	  grep -E "median|acceptance" build/step-fidelity-$$c.log | sed "s/^/$$c: /"; [ $$r = 0 ] || fail=1; \
	done; exit $$fail
# make test's representative: two MLP points per bf16 config, a CNN step, one int16 step, with the issue's
# bounds, and the timing model's micro-benchmarks (a few seconds).
step-fidelity-quick: build/tiny-bf16/step_fidelity build/small-bf16/step_fidelity build/tiny/step_fidelity
	@echo "== estimator --plan step vs the RTL step engine, quick (make step-fidelity for the sweep)"
	@build/tiny-bf16/step_fidelity 64,128,10@32 24,37,20,10@19 > build/step-fidelity-quick.log \
	  && build/small-bf16/step_fidelity 64,128,10@32 64,256,256,10@16 cnn:c4,c8s2,fc10@32 cnn:c8,c8,c8+1,fc10@16 cnn:c4n,c8s2n,fc10@32 >> build/step-fidelity-quick.log \
	  && build/tiny/step_fidelity 24,37,20,10@19 cnn:c4n,c8s2n,fc10@32 >> build/step-fidelity-quick.log \
	  && build/tiny-bf16/step_fidelity --micro >> build/step-fidelity-quick.log \
	  && build/small-bf16/step_fidelity --micro >> build/step-fidelity-quick.log \
	  || { cat build/step-fidelity-quick.log; exit 1; }
	@grep -E "acceptance|off bound" build/step-fidelity-quick.log
slice-check: build/slice_dump tests/slice/ref_slice.py
	@echo "== slicing search vs its brute-force reference (tests/slice/ref_slice.py)"
	@python3 tests/slice/ref_slice.py build/slice_dump > build/slice-check.log || { cat build/slice-check.log; exit 1; }
	@tail -1 build/slice-check.log

# The bf16 arithmetic units' RTL against the C model (tests/fp/): bf16_vectors writes the vectors
# with the model's results, tb_bf16_units (Icarus) applies them; any mismatch fails. ~10 s.
build/bf16_vectors: tests/fp/bf16_vectors.c tests/fp/fp_operands.h sw/ref/bf16.c sw/ref/bf16.h | $(DEPS_STAMP)
	@mkdir -p build
	$(CC) $(CSTD) -Isw -o $@ tests/fp/bf16_vectors.c sw/ref/bf16.c
build/fp/tb_bf16_units.vvp: tests/fp/tb_bf16_units.v $(BF16_RTL) rtl/npu_fp_fn.vh | lint-deps
	@mkdir -p build/fp
	$(IVERILOG) $(LINT_IVL_FLAGS) -Irtl -s tb_bf16_units -o $@ $(filter %.v,$^)
bf16-check: build/bf16_vectors build/fp/tb_bf16_units.vvp
	@echo "== bf16 arithmetic units: RTL vs C model (tests/fp/)"
	@build/bf16_vectors build/fp
	@vvp -n build/fp/tb_bf16_units.vvp +dir=build/fp

# Functional coverage report (sw/run/fcov.h): merges the NPU_FCOV files of make test / make regress.
build/fcov_report: sw/tools/fcov_report.c build/libnpuhost.a sw/run/fcov.h
	$(CC) $(CSTD) -Isw -Itb -o $@ $< build/libnpuhost.a $(HOST_LIBS)

build/npu: build/small/npu
	ln -sf small/npu $@

model: $(B)/libnpusim.a
cli: $(B)/npu build/npu

# ----------------------------------------------------------------------------- main targets
SIM_ARGS ?= gemm -m 300 -n 200 -k 500 --seed 1 --stall-pct 5 --trace waveforms/npu.fst --trace-end 20000
# One MLP training step (forward, dX, dW of every layer) with Algorithm 1's order per layer.
TRAIN_ARGS ?= train --layers 24,96,64,40 --batch 64 --order auto --stall-pct 5
sim: $(B)/npu build/npu
	@mkdir -p waveforms
	$(B)/npu $(SIM_ARGS)
	@echo "waveform: waveforms/npu.fst (open with: gtkwave waveforms/npu.gtkw)"
	@echo
	$(B)/npu $(TRAIN_ARGS)

# Each suite also writes JUnit-style XML for CI dashboards into build/reports/.
test: build/test_unit $(foreach c,$(TEST_CONFIGS),build/$(c)/test_rtl build/$(c)/npu) \
      build/$(PLANT_CONFIG)/fault/test_planted build/fcov_report slice-check slice-fidelity-quick step-fidelity-quick \
      conv-slice-quick bf16-check
	@mkdir -p build/reports; fail=0; t0=$$(date +%s); \
	section() { echo "== $$1   [$$(( $$(date +%s) - t0 )) s]"; }; rm -f build/reports/fcov-test.txt; \
	section "host unit tests"; build/test_unit --jobs $(JOBS) --xml=build/reports/unit.xml || fail=1; \
	$(foreach c,$(TEST_CONFIGS),section "RTL tests, config $(c) $(call test_filter,$(c))"; \
	  NPU_FCOV=$(CURDIR)/build/reports/fcov-test.txt \
	  build/$(c)/test_rtl --jobs $(JOBS) --xml=build/reports/rtl-$(c).xml $(call test_filter,$(c)) || fail=1;) \
	build/fcov_report build/reports/fcov-test.txt | tail -1; \
	section "planted RTL bug (NPU_PLANTED_FAULT, config $(PLANT_CONFIG)): the tests must catch it"; \
	build/$(PLANT_CONFIG)/fault/test_planted --verbose=0 --xml=build/reports/planted.xml || fail=1; \
	section "CLI bad-input checks"; tests/cli_checks.sh build/small/npu >/dev/null || fail=1; \
	section "--json of every command, CSV metadata, output paths"; \
	  python3 tests/json_checks.py build/small/npu || fail=1; \
	section "NumPy tensors in and out (.npy)"; $(PY_NUMPY) tests/npy_checks.py build/small/npu || fail=1; \
	section "npu fit: the fp32 reference trainer against NumPy, one epoch on the RTL"; \
	  $(PY_NUMPY) tests/fit_checks.py build/small/npu || fail=1; \
	section "saved programs replayed (--save-program of one GEMM and of multi-program commands, npu run)"; \
	  python3 tests/replay_checks.py build/small/npu build/tiny/npu || fail=1; \
	section "--timeline: trace-event JSON against the counters, several runs on one clock"; \
	  python3 tests/timeline_checks.py build/small/npu build/tmp || fail=1; \
	section "make workloads' shards (SHARD=i/N) and GEMM-topology training"; \
	  python3 tests/workloads_checks.py build/tiny/npu || fail=1; \
	section "SCALE-Sim-shaped reports and make plots' charts"; \
	  $(PY_NUMPY) tests/plots_checks.py build/small/npu build/tmp/plots || fail=1; \
	section "SIGINT under a terminal: progress line, exit 130, partial report, the FST"; \
	  python3 tests/sigint_checks.py build/small/npu build/tmp || fail=1; \
	section "cycle-count baseline (tests/perf/baseline.csv)"; tests/perf/perf_check.sh || fail=1; \
	if [ $$fail = 0 ]; then echo "make test: all suites passed in $$(( $$(date +%s) - t0 )) s (after the builds and quick checks)"; else echo "make test: FAILED"; exit 1; fi

# The full tier: every RTL test at REGRESS_CONFIGS x REGRESS_SEEDS plus the NPU fuzz at the
# acceptance counts, split deterministically by SHARD=i/N (tests/regress.sh; runs unchanged under
# GNU parallel: parallel make regress SHARD={}/4 ::: 0 1 2 3). JUnit XML per job in build/reports/.
REGRESS_CONFIGS ?= tiny small medium
REGRESS_SEEDS   ?= 1 2 3
SHARD           ?= 0/1
# Functional coverage of the shard: build/reports/fcov-regress-<i>.txt (make fcov-report merges
# the shards' files and requires every point).
FCOV_SHARD = build/reports/fcov-regress-$(firstword $(subst /, ,$(SHARD))).txt
regress: build/test_unit $(foreach c,$(REGRESS_CONFIGS),build/$(c)/test_rtl build/$(c)/npu) build/fcov_report
	@mkdir -p build/reports; rm -f $(FCOV_SHARD)
	@if [ "$(firstword $(subst /, ,$(SHARD)))" = 0 ]; then \
	  NPU_CONV_RANDOM=20 build/test_unit --jobs $(JOBS) --xml=build/reports/regress-unit.xml || exit 1; fi
	NPU_FCOV=$(CURDIR)/$(FCOV_SHARD) tests/regress.sh "$(SHARD)" "$(REGRESS_CONFIGS)" "$(REGRESS_SEEDS)"
	@build/fcov_report $(FCOV_SHARD)
fcov-report: build/fcov_report
	build/fcov_report --require-all build/reports/fcov-regress-*.txt

# NPU fuzz at the acceptance counts (100,000 instruction words, 10,000 descriptors) at tiny, in
# JOBS parallel parts. NPU_SEED=<n> changes the seed; a failure prints its replay command.
FUZZ_WORDS ?= 100000
FUZZ_DESCS ?= 10000
FUZZ_CONFIG ?= tiny
fuzz-npu: build/$(FUZZ_CONFIG)/test_rtl
	@mkdir -p build/reports; pids=""; \
	for p in $$(seq 0 $$(($(JOBS) - 1))); do \
	  NPU_FUZZ_PART=$$p/$(JOBS) NPU_FUZZ_WORDS=$(FUZZ_WORDS) NPU_FUZZ_DESCS=$(FUZZ_DESCS) \
	    build/$(FUZZ_CONFIG)/test_rtl --filter 'fuzz/*' --xml=build/reports/fuzz-npu-$$p.xml \
	    > build/reports/fuzz-npu-$$p.log 2>&1 & pids="$$pids $$!"; done; \
	fail=0; for q in $$pids; do wait $$q || fail=1; done; \
	grep -h "^fuzz/" build/reports/fuzz-npu-*.log; \
	if [ $$fail = 0 ]; then echo "fuzz-npu: $(FUZZ_WORDS) words + $(FUZZ_DESCS) descriptors at $(FUZZ_CONFIG): no hang, no wrong answer"; \
	else grep -h -A3 "Assertion\|replay" build/reports/fuzz-npu-*.log | head -30; echo "fuzz-npu: FAILED"; exit 1; fi

# Host code under AddressSanitizer and UndefinedBehaviorSanitizer (the unit suite runs the runtime
# on the C functional model, so no Verilator build is needed).
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
test-asan: $(DEPS_STAMP) build/npu_rev.h
	@mkdir -p build/asan
	$(CC) $(CSTD) -O1 $(SAN) -Isw -Itb -Ibuild -Itests/unit -o build/asan/test_unit \
	    $(UNIT_SRC) $(FUNCSIM_SRC) $(HOST_SRC) $(CLI_LIB_SRC) $(HOST_LIBS) -lcriterion
	ASAN_OPTIONS=detect_leaks=1 build/asan/test_unit --jobs $(JOBS)

# ----------------------------------------------------------------------------- host fuzzing
# libFuzzer harnesses (tests/fuzz/) under ASan + UBSan: `make fuzz-host FUZZ_SECONDS=600` runs
# each for FUZZ_SECONDS (make -j2 fuzz-host: two at a time). Corpora and crash artifacts land in
# build/fuzz/<harness>/; a crash fails the target and names the input that replays it
# (build/fuzz/fuzz_<harness> <file>). Needs clang (apt-get install clang). `files`: the .npy and
# saved-program loaders.
FUZZ_SECONDS ?= 60
FUZZ_HARNESSES := cli_args gencfg isa topology files
FUZZ_CC ?= $(shell command -v clang || command -v clang-14 || echo clang)
FUZZ_FLAGS := -std=c99 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
              -fno-omit-frame-pointer
.PHONY: fuzz-host fuzz-bins  # fuzz-run-% are not .PHONY: make skips pattern rules for phony targets
fuzz-bins: $(addprefix build/fuzz/fuzz_,$(FUZZ_HARNESSES))
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(HOST_SRC) $(CLI_LIB_SRC) sw/tools/gencfg.c $(FUNCSIM) \
                   build/small/npu_params.h build/npu_rev.h $(HOST_HDR)
	@command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) not found (apt-get install clang)"; exit 1; }
	@[ -f "$$($(FUZZ_CC) -print-file-name=libclang_rt.asan-x86_64.a)" ] || { \
	  echo "fuzz: installing clang's sanitizer runtime (libclang-rt-dev)"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
	  $$SUDO apt-get install -y -qq libclang-rt-14-dev >/dev/null 2>&1 || $$SUDO apt-get install -y -qq libclang-rt-dev >/dev/null 2>&1 \
	    || { echo "fuzz: clang's sanitizer runtime is missing: apt-get install libclang-rt-14-dev"; exit 1; }; }
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Isw -Itb -Itests/unit -Ibuild/small -Ibuild -o $@ $< \
	    $(HOST_SRC) $(CLI_LIB_SRC) $(FUNCSIM_SRC) $(HOST_LIBS)
fuzz-run-%: build/fuzz/fuzz_%
	@mkdir -p build/fuzz/$*/corpus
	@if [ -d tests/fuzz/seeds/$* ]; then cp -n tests/fuzz/seeds/$*/* build/fuzz/$*/corpus/ 2>/dev/null || true; fi
	@if [ $* = gencfg ]; then cp -n configs/*.cfg build/fuzz/$*/corpus/ 2>/dev/null || true; fi
	@echo "== fuzz $* for $(FUZZ_SECONDS) s (log: build/fuzz/$*/log)"
	@ASAN_OPTIONS=detect_leaks=1 build/fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	    -rss_limit_mb=2048 -close_fd_mask=2 -artifact_prefix=build/fuzz/$*/ -print_final_stats=1 \
	    build/fuzz/$*/corpus > build/fuzz/$*/log 2>&1; rc=$$?; \
	  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" build/fuzz/$*/log | tr '\n' ' '; echo; \
	  if [ $$rc != 0 ]; then tail -40 build/fuzz/$*/log; \
	    echo "fuzz $*: FAILED (crash input in build/fuzz/$*/; replay: build/fuzz/fuzz_$* <file>)"; exit 1; fi; \
	  echo "fuzz $*: clean ($$(ls build/fuzz/$*/corpus | wc -l) corpus inputs)"
fuzz-host: $(addprefix fuzz-run-,$(FUZZ_HARNESSES))

# Three tools, every config, the RTL with and without its assertions (NPU_ASSERTS):
#  Verilator --lint-only -Wall (npu_top and the bench reference);
#  Icarus iverilog -g2005 -Wall, parse + elaborate with the config's parameters (-P from the -G
#    lines of verilator.f). -Wno-sensitivity-entire-array: Icarus notes that an always @* reading
#    a counter array by a variable index is sensitive to the whole array (true, and intended);
#  Yosys read_verilog + hierarchy -check -top npu_top (-chparam per config) + proc, the synthesis
#    view (no NPU_ASSERTS). Any Yosys warning fails, except "Replacing memory ... with list of
#    registers" (how proc represents small register arrays, not a defect).
IVERILOG ?= iverilog
YOSYS    ?= yosys
LINT_IVL_FLAGS := -g2005 -Wall -Wno-sensitivity-entire-array
# Yosys elaborates every PE: ~33 s at S=16 against ~1 s at S=2, and the RTL is generic in S, so
# `make lint` runs Yosys at the S <= 8 configs (every config still goes through Verilator and
# Icarus; `make synth CONFIG=medium` or LINT_YOSYS_CONFIGS="$(CONFIGS)" covers the rest).
LINT_YOSYS_CONFIGS ?= tiny small small-w2
# The bf16 units (and the narrow DRAIN in bf16), also linted on their own by all three tools
# (from BF16_RTL): Yosys sees npu_top only at LINT_YOSYS_CONFIGS, which are int16.
LINT_UNIT_TOPS := npu_pe:BF16=1 npu_fp32_to_bf16 npu_drain_narrow:BF16=1
lint-deps: $(DEPS_STAMP)
	@missing=""; \
	command -v $(IVERILOG) >/dev/null 2>&1 || missing="$$missing iverilog"; \
	command -v $(YOSYS) >/dev/null 2>&1 || missing="$$missing yosys"; \
	$(call APT_INSTALL,lint)
# Every tool's verdict counts: a non-zero exit or any warning line in its log fails the target.
# Each (tool, config) and each unit top is its own job with a stamp in build/lint/ (redone when the
# RTL or the config changes), run LINT_JOBS at a time: make lint is CPU-bound, so it takes the
# longest job or the CPU time over the cores, whichever is more, and nothing when nothing changed.
LINT_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
LINT_STAMPS := $(foreach c,$(LINT_YOSYS_CONFIGS),build/lint/yosys-$(c).ok) \
  $(foreach c,$(CONFIGS),build/lint/verilator-$(c).ok build/lint/iverilog-$(c).ok) \
  $(foreach u,$(LINT_UNIT_TOPS),build/lint/unit-$(firstword $(subst :, ,$(u))).ok)
lint: lint-deps
	@$(MAKE) --no-print-directory -k -j$(LINT_JOBS) lint-all
lint-all: $(LINT_STAMPS)
	@echo "lint: verilator -Wall clean (npu_top with and without NPU_ASSERTS, the bench reference; configs: $(CONFIGS))"
	@echo "lint: iverilog -g2005 -Wall clean (parse + elaborate, with and without NPU_ASSERTS; configs: $(CONFIGS))"
	@echo "lint: yosys read_verilog + hierarchy -check + proc clean (configs: $(LINT_YOSYS_CONFIGS))"
	@echo "lint: the units outside npu_top clean in all three tools (tops: $(LINT_UNIT_TOPS))"
build/lint/verilator-%.ok: $(RTL) tb/npu_bench_top.v build/%/verilator.f build/%/npu_defs.vh
	@mkdir -p build/lint; rm -f $@; log=build/lint/verilator-$*.log; \
	( set -e; for d in "" "+define+NPU_ASSERTS"; do \
	    $(VERILATOR) --lint-only -Wall $$d -f build/$*/verilator.f -Ibuild/$* -Irtl --top-module npu_top $(RTL); done; \
	  $(VERILATOR) --lint-only -Wall -f build/$*/verilator.f -Ibuild/$* -Irtl --top-module npu_bench_top \
	    tb/npu_bench_top.v rtl/npu_flexsa.v rtl/npu_core.v rtl/npu_pe.v ) >$$log 2>&1 \
	  && ! grep -q "^%\(Warning\|Error\)" $$log \
	  || { cat $$log; echo "lint: verilator failed, config $*"; exit 1; }; touch $@
build/lint/iverilog-%.ok: $(RTL) build/%/verilator.f build/%/npu_defs.vh
	@mkdir -p build/lint; rm -f $@; log=build/lint/iverilog-$*.log; \
	P=$$(sed -n 's/^-G\([A-Za-z_0-9]*\)=\(.*\)$$/-Pnpu_top.\1=\2/p' build/$*/verilator.f); \
	( set -e; for d in "" "-DNPU_ASSERTS"; do \
	    $(IVERILOG) $(LINT_IVL_FLAGS) $$d -Ibuild/$* -Irtl -s npu_top $$P -o build/lint/$*$$d.vvp $(RTL); \
	  done ) >$$log 2>&1 && [ ! -s $$log ] \
	  || { cat $$log; echo "lint: iverilog failed or warned, config $*"; exit 1; }; touch $@
build/lint/yosys-%.ok: $(RTL) build/%/verilator.f build/%/npu_defs.vh
	@mkdir -p build/lint; rm -f $@; log=build/lint/yosys-$*.log; \
	C=$$(sed -n 's/^-G\([A-Za-z_0-9]*\)=\(.*\)$$/-chparam \1 \2/p' build/$*/verilator.f | tr '\n' ' '); \
	$(YOSYS) -q -l $$log -p "read_verilog -Ibuild/$* -Irtl $(RTL); hierarchy -check -top npu_top $$C; proc" \
	  >/dev/null 2>&1 || { tail -20 $$log; echo "lint: yosys failed, config $*"; exit 1; }; \
	if grep "^Warning:" $$log | grep -v "Replacing memory .* with list of registers"; then \
	  echo "lint: yosys warnings, config $* ($$log)"; exit 1; fi; touch $@
# $(call lint_unit_rule,TOP,PARAM=VALUE or empty): one unit top through all three tools.
define lint_unit_rule
build/lint/unit-$(1).ok: $(BF16_RTL)
	@mkdir -p build/lint; rm -f $$@
	@$(VERILATOR) --lint-only -Wall -Irtl --top-module $(1) $(if $(2),-G$(2)) $(BF16_RTL) \
	  > build/lint/verilator-$(1).log 2>&1 && ! grep -q "^%\(Warning\|Error\)" build/lint/verilator-$(1).log \
	  || { cat build/lint/verilator-$(1).log; echo "lint: verilator failed, top $(1)"; exit 1; }
	@$(IVERILOG) $(LINT_IVL_FLAGS) -Irtl -s $(1) $(if $(2),-P$(1).$(2)) -o build/lint/$(1).vvp $(BF16_RTL) \
	  > build/lint/iverilog-$(1).log 2>&1 && [ ! -s build/lint/iverilog-$(1).log ] \
	  || { cat build/lint/iverilog-$(1).log; echo "lint: iverilog failed or warned, top $(1)"; exit 1; }
	@$(YOSYS) -q -l build/lint/yosys-$(1).log -p "read_verilog -Irtl $(BF16_RTL); \
	  hierarchy -check -top $(1) $(if $(2),-chparam $(subst =, ,$(2))); proc" >/dev/null 2>&1 \
	  || { tail -20 build/lint/yosys-$(1).log; echo "lint: yosys failed, top $(1)"; exit 1; }
	@! grep "^Warning:" build/lint/yosys-$(1).log || { echo "lint: yosys warnings, top $(1)"; exit 1; }
	@touch $$@
endef
$(foreach u,$(LINT_UNIT_TOPS),$(eval $(call lint_unit_rule,$(firstword $(subst :, ,$(u))),$(word 2,$(subst :, ,$(u))))))

# The cycle-count baseline (tests/perf/): exact cycles, MACs, DRAM bytes per tag and program-image
# hashes of a reference set at tiny and small. `make test` checks it; perf-baseline rewrites it.
perf-check: build/tiny/npu build/small/npu
	tests/perf/perf_check.sh
perf-baseline: build/tiny/npu build/small/npu
	tests/perf/perf_check.sh --write

# the bf16 build of the config beside it, when there is one (configs/<config>-bf16.cfg)
BENCH_BF16 := $(if $(wildcard configs/$(CONFIG)-bf16.cfg),build/$(CONFIG)-bf16/npu)
# and its two-word-beat build (configs/<config>-w2.cfg): issue 14 acceptance 8's roofline table
BENCH_W2 := $(if $(wildcard configs/$(CONFIG)-w2.cfg),build/$(CONFIG)-w2/npu)
bench: $(B)/npu $(B)/bench_array $(B)/conv_slice_check $(BENCH_BF16) $(BENCH_W2)
	BENCH_W2=$(BENCH_W2) tests/bench.sh $(B)/npu $(B)/bench_array $(BENCH_BF16)

# PNG charts (plots/plots.py, matplotlib) from the CSVs of a bench run: SCALE-Sim's NCF GEMM
# topology (utilization and DRAM traffic per layer, --reports and --csv), the conv layers of
# tests/topologies/conv_small.csv both ways (EcoFlow speedups) and make bench's training bench
# (build/bench/train_bench.csv; run here when make bench has not written it). Into build/plots/.
PLOT_DIR := build/plots
plots: $(B)/npu $(DEPS_STAMP)
	@mkdir -p $(PLOT_DIR)/data
	$(B)/npu gemm --topology tests/topologies/scalesim/NCF.csv --reports $(PLOT_DIR)/data \
	    --csv $(PLOT_DIR)/data/topology.csv --quiet
	$(B)/npu conv --topology tests/topologies/conv_small.csv --dataflow both \
	    --csv $(PLOT_DIR)/data/conv.csv --quiet 2>/dev/null
	if [ -f build/bench/train_bench.csv ]; then cp build/bench/train_bench.csv $(PLOT_DIR)/data/; \
	else $(B)/npu train-bench --csv $(PLOT_DIR)/data/train_bench.csv > /dev/null; fi
	if [ -f build/bench/fit_mlp.csv ]; then cp build/bench/fit_mlp.csv $(PLOT_DIR)/data/fit.csv; fi
	set -e; $(foreach n,$(EST_PLOT_NETS),$(call est_plot_data,$(subst |, ,$(n))))
	$(PY_NUMPY) plots/plots.py $(PLOT_DIR)/data $(PLOT_DIR)
# The estimator's charts (issue 16: the thesis's observations at our scale), per network
# NAME|MODEL|INPUT|BATCH|SPM sizes of the traffic sweep|small SPM|large SPM|batches: a sweep over
# SPM sizes, the per-step estimate at the small and the large SPM, a sweep over batches at both.
# res: a residual block (layer 3 adds layer 1's output), its block-reuse step at 389 KiB (docs/estimator.md 8).
EST_PLOT_NETS := cnn|cnn:c32,c32,c64s2,c64,fc10|16x16x3|16|512,768,1024,1536,2048,4096,8192|1024|4096|1,2,4,8,16,32,64 \
  mlp|mlp:256,512,512,512,512,10|16x16x1|128|2048,3072,4096,6144,8192,16384|3072|8192|16,32,64,128,256 \
  res|cnn:c16,c16,c16+1,fc10|16x16x3|16|128,256,320,352,384,388,389,416,512,640,1024,2048|384|1024|1,2,4,8,16,32
est_plot_data = $(B)/npu sweep --model $(word 2,$(1)) --input $(word 3,$(1)) --batch $(word 4,$(1)) \
	    --space 'spm=$(word 5,$(1))' --csv $(PLOT_DIR)/data/est_spm.$(word 1,$(1)).csv --quiet && \
	  $(B)/npu sweep --model $(word 2,$(1)) --input $(word 3,$(1)) \
	    --space 'spm=$(word 6,$(1)),$(word 7,$(1));batch=$(word 8,$(1))' --csv $(PLOT_DIR)/data/est_batch.$(word 1,$(1)).csv --quiet && \
	  $(foreach k,6 7,$(B)/npu estimate --model $(word 2,$(1)) --input $(word 3,$(1)) --batch $(word 4,$(1)) \
	    --spm-kib $(word $(k),$(1)) --csv $(PLOT_DIR)/data/est_steps.$(word 1,$(1)).$(word $(k),$(1)).csv --quiet &&) true;


# Issue 16: `npu sweep --validate` as a job: SWEEP_VALIDATE design points of the step plan's
# sweep (SWEEP_MODEL over SWEEP_SPACE, tensors kept in the SPM's last bank) run on CONFIG's RTL,
# one training step each, against their estimates (bytes exact, step cycles within 10%); each
# job writes build/sweep/validate-<config>-<i>of<N>.csv and tests/sweep_merge.py summarises
# them. SHARD=i/N runs a deterministic share (parallel make sweep-validate SHARD={}/4 ::: 0 1 2 3).
SWEEP_MODEL    ?= mlp:64,128,10
SWEEP_SPACE    ?= spm=2,4,8,16,32;bw=8,16,32,64;batch=16,32,64
SWEEP_VALIDATE ?= 24
sweep-validate: $(B)/npu
	@mkdir -p build/sweep
	SHARD=$(SHARD) $(B)/npu sweep --model $(SWEEP_MODEL) --plan step --resident-banks 1 \
	    --space '$(SWEEP_SPACE)' --validate $(SWEEP_VALIDATE) --quiet \
	    --csv build/sweep/validate-$(CONFIG)-$(subst /,of,$(SHARD)).csv

# Every layer of every topology in ../shared/workloads at full size, batch 1, on the RTL of
# CONFIG: per-network tables (cycles, utilization, DRAM bytes / compulsory); ~25 min at small plus
# about 20 min for each of GNMT 13, 15, 16. SHARD=i/N runs a balanced share of every topology's
# layers (independent jobs); WORKLOADS_TRAIN=1 trains the GEMM topologies (fwd, dX, dW).
workloads: $(B)/npu
	SHARD=$(SHARD) tests/workloads.sh $(B)/npu

clean:
	rm -rf build

# Synthesis view (Yosys): make synth CONFIG=<name>
-include synth.mk
-include coverage.mk
