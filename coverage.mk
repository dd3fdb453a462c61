# coverage.mk - `make coverage`: line and toggle coverage of rtl/ from the RTL tests of `make test`.
#   make coverage [COV_CONFIGS="tiny small"]
# Per config, a second model is built with Verilator's --coverage-line --coverage-toggle into
# build/<config>/cov/ (the normal model is untouched), the RTL test binary is linked against it
# and run; every simulator instance writes its counts (NPU_COV_DIR, tb/npu_sim.cpp) and
# verilator_coverage merges them, prints the line / toggle percentages per config and for all
# configs, and writes an annotated copy of rtl/ under build/coverage/annotated/ (lines with
# '%000000' were never executed). The coverage model leaves out the NPU_ASSERTS checks: their
# failure branches would count as lines never run. Slow: the instrumented model runs the tiny
# suite in ~25 min on 2 busy cores (COV_CONFIGS=tiny for a first look).
COV_CONFIGS ?= tiny small
COV_FLAGS   := --coverage-line --coverage-toggle

.PHONY: coverage
coverage: $(foreach c,$(COV_CONFIGS),build/$(c)/cov/test_rtl)
	@rm -rf build/coverage && mkdir -p build/coverage
	@for c in $(COV_CONFIGS); do \
	  mkdir -p build/coverage/$$c; \
	  echo "== coverage run, config $$c"; \
	  NPU_COV_DIR=build/coverage/$$c build/$$c/cov/test_rtl --jobs $(JOBS) >build/coverage/$$c.log 2>&1 \
	    || { echo "coverage: RTL tests failed at $$c (see build/coverage/$$c.log)"; exit 1; }; \
	  verilator_coverage --write build/coverage/$$c.dat build/coverage/$$c/*.dat >/dev/null; \
	done
	@verilator_coverage --write build/coverage/all.dat $(foreach c,$(COV_CONFIGS),build/coverage/$(c).dat) >/dev/null
	@tests/coverage_report.sh build/coverage $(COV_CONFIGS)

build/%/cov/libnpusim.a: $(GEN_FILES) $(RTL) rtl/npu_assert.vh $(TB_DEPS)
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
	    build/$*/cov/rtl_test_assert.o build/$*/rtl_fake_npu_sim.o \
	    build/libnpuhost.a build/$*/cov/libnpusim.a $(SIM_LIBS) -lcriterion
