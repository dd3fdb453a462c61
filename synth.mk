# synth.mk -- synthesis view (issue 7), included by the Makefile (`-include synth.mk`).
#   make synth [CONFIG=small]   Yosys on npu_top with the config's parameters: per-module area
#                               (NAND2 eq.), flip-flops, multipliers, memory bits, logic depth and
#                               the deepest path, the FlexSA overhead table. Fails on a latch or an
#                               undriven net. Output: build/<config>/synth/ (CSV, JSON, logs).
# Uses the Makefile's CONFIG, B, RTL and JOBS and its generated build/<config>/verilator.f and
# npu_defs.vh. Details: constraints/README.md. Standalone test: make -f Makefile -f synth.mk synth
YOSYS       ?= yosys
SYNTH_PY    ?= python3
SYNTH_JOBS  ?= $(if $(JOBS),$(JOBS),2)

.PHONY: synth synth-deps

# Installs Yosys (and python3) if missing, like the Makefile's deps target, or says what to install.
synth-deps:
	@missing=""; \
	command -v $(YOSYS) >/dev/null 2>&1 || missing="$$missing yosys"; \
	command -v $(SYNTH_PY) >/dev/null 2>&1 || missing="$$missing python3"; \
	$(call APT_INSTALL,synth)

synth: synth-deps $(B)/verilator.f $(B)/npu_defs.vh
	@YOSYS="$(YOSYS)" PYTHON="$(SYNTH_PY)" sh constraints/synth.sh $(CONFIG) $(B) $(SYNTH_JOBS) $(RTL)
