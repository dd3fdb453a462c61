# coverage.mk - `make coverage`: line and toggle coverage of rtl/ from the RTL tests of `make test`.
#   make coverage [COV_CONFIGS="tiny small"] [COV_LIST_MAX=60]
# Per config, a second model is built with Verilator's --coverage-line --coverage-toggle into
# build/<config>/cov/ (the normal model is untouched), the RTL test binary is linked against it
# and run; every simulator instance writes its counts (NPU_COV_DIR, tb/npu_sim.cpp) and
# verilator_coverage merges them, prints the line / toggle percentages per config and for all
# configs, the least covered modules, every line point no config hit (file:line, branch arm,
# source text) and writes an annotated copy of rtl/ under build/coverage/annotated/ (lines with
# '%000000' were never executed). The coverage model leaves out the NPU_ASSERTS checks: their
# failure branches would count as lines never run.
# Slow (measured on 2 cores shared with other jobs, load 6-10): COV_CONFIGS=tiny from a fresh
# tree 39 min (verilating and compiling both tiny models ~18 min, the instrumented suite ~20 min);
# COV_CONFIGS=small: 65 min (both small models ~35 min, the suite ~29 min; gemm::
# compute_bound_utilization then hits its 600 s Criterion timeout on the instrumented model: a
# timeout is reported as a WARNING and its points are left out, any other failure fails the target).
# Measured (session 6, COV_CONFIGS=tiny, 23 min on 2 loaded cores): line 99.2% (481/485), toggle
# 86.5%; dram_resp/store_flushes_the_read_ahead, added after that run, hits the STORE's FLUSH wait
# (482/485). Earlier: tiny line 96.9%, small 96.9%, merged toggle 91.9%.
# Rebuilds are incremental (see the flags stamp below), so a re-run after a test change costs the
# suite only. Expected never-hit line points (tiny and small): npu_exec's non-power-of-two SPM
# compare (gencfg requires powers of two), npu_spm's SUBW = 1 sub-bank code (npu_top uses
# SUBW = 2) and npu_exec's DRAIN-acc branch for a refused high-word write after its old word
# arrived (write port 1 is only blocked by port 0, whose low word is always written first). The
# DRAM_RESP error paths are reached through the DRAM model's error window (test_dram_resp.c).
COV_CONFIGS ?= tiny small
COV_FLAGS   := --coverage-line --coverage-toggle

.PHONY: coverage
coverage: $(foreach c,$(COV_CONFIGS),build/$(c)/cov/test_rtl)
	@rm -rf build/coverage && mkdir -p build/coverage; fail=""; \
	for c in $(COV_CONFIGS); do \
	  mkdir -p build/coverage/$$c; \
	  echo "== coverage run, config $$c"; \
	  NPU_COV_DIR=build/coverage/$$c build/$$c/cov/test_rtl --jobs $(JOBS) >build/coverage/$$c.log 2>&1 \
	    || { grep -h "^\[FAIL\]" build/coverage/$$c.log; \
	         if grep "^\[FAIL\]" build/coverage/$$c.log | grep -qv "Timed out" \
	            || ! grep -q "^\[FAIL\].*Timed out" build/coverage/$$c.log; then fail="$$fail $$c"; \
	         else echo "coverage: WARNING: at $$c the test(s) above hit their Criterion timeout on the" \
	                   "slower instrumented model; their points are not counted"; fi; }; \
	  verilator_coverage --write build/coverage/$$c.dat build/coverage/$$c/*.dat >/dev/null; \
	done; \
	verilator_coverage --write build/coverage/all.dat $(foreach c,$(COV_CONFIGS),build/coverage/$(c).dat) >/dev/null; \
	tests/coverage_report.sh build/coverage $(COV_CONFIGS); \
	if [ -n "$$fail" ]; then echo "coverage: RTL tests failed at$$fail (build/coverage/<config>.log)"; exit 1; fi

# The instrumented model is rebuilt when the RTL, the harness or the Verilator flags change (the
# flags through build/<config>/cov/flags, rewritten only when they differ); the test binary when
# any RTL test or the host library changes (through build/<config>/test_rtl).
.PHONY: cov-flags-force
build/%/cov/flags: cov-flags-force
	@mkdir -p $(@D)
	@echo '$(VERILATOR) $(VFLAGS) $(COV_FLAGS) $(VMAKE_OPT)' | cmp -s - $@ \
	  || echo '$(VERILATOR) $(VFLAGS) $(COV_FLAGS) $(VMAKE_OPT)' > $@
build/%/cov/libnpusim.a: $(GEN_FILES) $(RTL) rtl/npu.f $(wildcard rtl/*.vh) $(TB_DEPS) build/%/cov/flags
	@echo "== verilating config $* with coverage"
	rm -rf build/$*/cov/obj
	@mkdir -p build/$*/cov
	$(VERILATOR) $(VFLAGS) $(COV_FLAGS) -f build/$*/verilator.f -Ibuild/$* -Irtl $(RTL) --Mdir build/$*/cov/obj
	$(MAKE) -s -j$(JOBS) -C build/$*/cov/obj -f Vnpu_top.mk $(VMAKE_OPT) \
	    Vnpu_top__ALL.a verilated.o verilated_fst_c.o verilated_threads.o verilated_cov.o
	$(CXX) -O2 -g -std=c++14 -DNPU_TRACE -DVM_COVERAGE=1 $(VHOOKS) -Ibuild/$* -Ibuild/$*/cov/obj -Itb $(VINC) \
	    -c tb/npu_sim.cpp -o build/$*/cov/npu_sim.o
	$(CC) $(CSTD) -Ibuild/$* -Itb -c tb/dram_model.c -o build/$*/cov/dram_model.o
	rm -f $@ && ar rcs $@ build/$*/cov/obj/*.o build/$*/cov/npu_sim.o build/$*/cov/dram_model.o

# The coverage model has no assertions, so test_assert.c is compiled once more with
# NPU_ASSERT_SITES=0: its fault-injection tests then skip instead of waiting for checks that
# are not there.
build/%/cov/test_rtl: build/%/cov/libnpusim.a build/%/test_rtl
	$(CC) $(CSTD) -DNPU_ASSERT_SITES=0 -Ibuild/$* -Isw -Itb -Itests/rtl -c tests/rtl/test_assert.c \
	    -o build/$*/cov/rtl_test_assert.o
	$(CXX) -o $@ $(filter-out build/$*/rtl_test_assert.o,$(foreach f,$(RTLT_SRC),build/$*/rtl_$(basename $(notdir $(f))).o)) \
	    build/$*/cov/rtl_test_assert.o $(foreach f,$(FUNCSIM_SRC),build/$*/rtl_$(basename $(notdir $(f))).o) \
	    build/libnpuhost.a build/$*/cov/libnpusim.a $(SIM_LIBS) -lcriterion
