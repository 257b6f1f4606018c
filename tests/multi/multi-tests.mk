# Models bigger than one IPU: the chip-level refusal of a model that does
# not fit, with the number of IPUs it needs; the model split over IPUs
# (compiler/partition/), its stages run on in-process devices.
CFLAGS_tests_multi_ := $(COMPILER_CPPFLAGS)

MULTI_TEST_NAMES := test_multi_fit test_multi_split test_multi_group test_multi_ipuef test_multi_runner
MULTI_TESTS := $(MULTI_TEST_NAMES:%=$(BUILD)/tests/multi/%)
MULTI_MODEL_OBJ := $(BUILD)/tests/multi/mlp_model.o

$(MULTI_TESTS:%=%.o) $(MULTI_MODEL_OBJ): $(COMPILER_PB_H)

$(MULTI_TESTS): $(BUILD)/tests/multi/%: $(BUILD)/tests/multi/%.o $(MULTI_MODEL_OBJ) \
		$(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(filter %.o,$^) $(COMPILER_LINK) $(LDLIBS_BASE)

TESTS += $(MULTI_TESTS)

# A BERT-shaped encoder from torch (tiny_encoder.py: 4 layers, d 64)
# split over IPUs, against one IPU's bits and torch's output; built with
# the sanitizers as make check builds every test.
$(BUILD)/tests/multi/test_multi_onnx.o: $(COMPILER_PB_H)
$(BUILD)/tests/multi/test_multi_onnx: $(BUILD)/tests/multi/test_multi_onnx.o $(MULTI_MODEL_OBJ) \
		$(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(filter %.o,$^) $(COMPILER_LINK) $(LDLIBS_BASE)
PROGRAMS += $(BUILD)/tests/multi/test_multi_onnx

.PHONY: check-multi-onnx
check-multi-onnx: $(BUILD)/tests/multi/test_multi_onnx
	@mkdir -p $(BUILD)/tests/multi/encoder
	/usr/bin/python3 tests/multi/tiny_encoder.py $(BUILD)/tests/multi/encoder 4
	scripts/run-tests "$(BUILD)/tests/multi/test_multi_onnx $(BUILD)/tests/multi/encoder"
CHECKS += ;make -s check-multi-onnx;

# The group's link handlers hand buffers between device threads, and the
# ModelRunner's group reports runs from every IPU's thread: their tests
# under ThreadSanitizer too.
.PHONY: check-multi-tsan
check-multi-tsan:
	$(MAKE) -s BUILD=build/tsan SANITIZE=thread build/tsan/tests/multi/test_multi_group \
	  build/tsan/tests/multi/test_multi_runner
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" build/tsan/tests/multi/test_multi_group
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" build/tsan/tests/multi/test_multi_runner
CHECKS += ;make -s check-multi-tsan;

# ipuef-dump lists a group .ipuef's IPUs and links, as text and as JSON;
# ipu-run runs it (a group of in-process devices, no --device) with the
# same output bits as the model compiled for one IPU, and --json gives
# the link transfers and bytes.
.PHONY: check-multi-ipuef
check-multi-ipuef: $(BUILD)/tests/multi/test_multi_ipuef $(BUILD)/bin/ipuef-dump $(BUILD)/bin/ipu-run
	MULTI_IPUEF_OUT=$(BUILD)/tests/multi/mlp2.ipuef MULTI_IPUEF_ONE=$(BUILD)/tests/multi/mlp1.ipuef \
	  $(BUILD)/tests/multi/test_multi_ipuef >/dev/null
	$(BUILD)/bin/ipuef-dump $(BUILD)/tests/multi/mlp2.ipuef | grep -q '^IPUs (a group of 2, not pipelined):'
	$(BUILD)/bin/ipuef-dump $(BUILD)/tests/multi/mlp2.ipuef | grep -q 'IPU 0 stream [0-9]* -> IPU 1 stream [0-9]*, 8192 bytes'
	$(BUILD)/bin/ipuef-dump --json $(BUILD)/tests/multi/mlp2.ipuef | /usr/bin/python3 -c \
	  'import json,sys; g=json.load(sys.stdin)["metadata"]["group"]; assert len(g["ipus"])==2 and len(g["links"])==1 and g["links"][0]["bytes"]==8192, g; print("check-multi-ipuef: 2 IPUs, 1 link of 8192 bytes")'
	$(BUILD)/bin/ipu-run $(BUILD)/tests/multi/mlp1.ipuef --iterations 3 --output mm3=$(BUILD)/tests/multi/mlp1_y.npy >/dev/null
	$(BUILD)/bin/ipu-run $(BUILD)/tests/multi/mlp2.ipuef --iterations 3 --output mm3=$(BUILD)/tests/multi/mlp2_y.npy >/dev/null
	cmp $(BUILD)/tests/multi/mlp1_y.npy $(BUILD)/tests/multi/mlp2_y.npy
	$(BUILD)/bin/ipu-run $(BUILD)/tests/multi/mlp2.ipuef --iterations 3 --inflight 4 --json | /usr/bin/python3 -c \
	  'import json,sys; g=json.load(sys.stdin)["group"]; n=g["requests"]; assert g["ipus"]==2 and n>=7 and g["link_transfers"]==n and g["link_bytes"]==8192*n and g["modelled_cycles_pipelined"]<g["modelled_cycles_sequential"], g; print("check-multi-ipuef: ipu-run on 2 IPUs bit-identical to one IPU;", n, "requests,", g["link_bytes"], "link bytes, modelled", g["modelled_cycles_pipelined"], "vs", g["modelled_cycles_sequential"], "cycles")'
	@# each line above stops the recipe when its check fails: reaching here is all of them
	@echo "check-multi-ipuef: 5 passed, 0 failed"
CHECKS += ;make -s check-multi-ipuef;

# Through the tools: ipu-compile --num-ipus 2 (and PopRT's --num_ipus with
# --manual_sharding_config and --enable_pipelining) on the tests/models MLP
# for a small device, then ipu-run: the same output bits as the model
# compiled for one such IPU; an IPU too small for the model alone refuses
# it, two of them run it; Python's ipu.runtime.Runner on the split model.
MULTI_CLI := $(BUILD)/tests/multi/cli
.PHONY: check-multi-cli
check-multi-cli: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump
	@rm -rf $(MULTI_CLI) && mkdir -p $(MULTI_CLI)
	/usr/bin/python3 tests/models/make_models.py $(MULTI_CLI) --only mlp >/dev/null
	printf -- '- node: Gemm_12\n  ipu: 1\n' > $(MULTI_CLI)/shard.yaml
	$(IPU_COMPILE) --input-model $(MULTI_CLI)/mlp.onnx --target tiles=128,tile-mem=64KiB -o $(MULTI_CLI)/one.ipuef >/dev/null
	$(IPU_COMPILE) --input-model $(MULTI_CLI)/mlp.onnx --target tiles=128,tile-mem=64KiB --num-ipus 2 -o $(MULTI_CLI)/auto.ipuef >/dev/null
	$(IPU_COMPILE) --input_model $(MULTI_CLI)/mlp.onnx --target tiles=128,tile-mem=64KiB --num_ipus 2 \
	  --manual_sharding_config $(MULTI_CLI)/shard.yaml --enable_pipelining -o $(MULTI_CLI)/manual.ipuef >/dev/null
	$(BUILD)/bin/ipuef-dump $(MULTI_CLI)/manual.ipuef | grep -q '^IPUs (a group of 2, pipelined):'
	$(BUILD)/bin/ipuef-dump $(MULTI_CLI)/manual.ipuef | grep -q '^  link:relu_7$$'
	printf 'input_model: mlp.onnx\ntarget: "tiles=128,tile-mem=64KiB"\nnum_ipus: 2\nmanual_sharding_config: shard.yaml\nenable_pipelining: true\n' > $(MULTI_CLI)/cfg.yaml
	$(IPU_COMPILE) --config-yaml $(MULTI_CLI)/cfg.yaml -o $(MULTI_CLI)/cfg.ipuef 2>/dev/null
	$(BUILD)/bin/ipuef-dump $(MULTI_CLI)/cfg.ipuef | grep -q '^  link:relu_7$$'
	for m in one auto manual; do \
	  $(BUILD)/bin/ipu-run $(MULTI_CLI)/$$m.ipuef --input x=$(MULTI_CLI)/mlp.in.x.npy --iterations 2 \
	    --output y=$(MULTI_CLI)/$$m.y.npy >/dev/null || exit 1; done
	cmp $(MULTI_CLI)/one.y.npy $(MULTI_CLI)/auto.y.npy
	cmp $(MULTI_CLI)/one.y.npy $(MULTI_CLI)/manual.y.npy
	! $(IPU_COMPILE) --input-model $(MULTI_CLI)/mlp.onnx --target tiles=64,tile-mem=64KiB -o $(MULTI_CLI)/small.ipuef 2>$(MULTI_CLI)/small.err
	grep -q 'it needs at least 2 IPUs' $(MULTI_CLI)/small.err
	$(IPU_COMPILE) --input-model $(MULTI_CLI)/mlp.onnx --target tiles=64,tile-mem=64KiB --num-ipus 2 -o $(MULTI_CLI)/small2.ipuef >/dev/null
	$(BUILD)/bin/ipu-run $(MULTI_CLI)/small2.ipuef --input x=$(MULTI_CLI)/mlp.in.x.npy --iterations 2 --json | /usr/bin/python3 -c \
	  'import json,sys; g=json.load(sys.stdin)["group"]; assert g["ipus"]==2 and g["link_bytes"]==32768*g["requests"], g'
	! $(IPU_COMPILE) --input-model $(MULTI_CLI)/mlp.onnx --manual-sharding-config $(MULTI_CLI)/shard.yaml -o $(MULTI_CLI)/x.ipuef 2>$(MULTI_CLI)/noipus.err
	grep -q -- '--manual-sharding-config needs --num-ipus N' $(MULTI_CLI)/noipus.err
	$(MAKE) -s python
	cd $(MULTI_CLI) && PYTHONPATH=$(CURDIR)/$(BUILD)/python /usr/bin/python3 -c \
	  'import numpy as np; from ipu.runtime import Runner; x = np.load("mlp.in.x.npy"); y = [np.zeros([16, 10], np.float32) for i in range(6)]; r1 = Runner("one.ipuef"); r2 = Runner("auto.ipuef"); r1.execute({"x": x}, {"y": y[0]}); fs = [r2.execute_async({"x": x}, {"y": y[i]}) for i in range(1, 6)]; [f.wait() for f in fs]; assert all(v.tobytes() == y[0].tobytes() for v in y[1:]); print("check-multi-cli: ipu.runtime.Runner on the 2-IPU model: 5 requests in flight, the bits of one IPU")'
	@echo "check-multi-cli: ipu-compile --num-ipus 2 / --num_ipus 2 --manual_sharding_config: ipu-run's output bit-identical to one IPU's; 64 x 64 KiB: one IPU refuses, two run it"
	@# each line above stops the recipe when its check fails: reaching here is all of them
	@echo "check-multi-cli: 9 passed, 0 failed"
CHECKS += ;make -s check-multi-cli;

# ipu-run --profile on the MLP split over 2 IPUs with 4 requests in flight:
# one track per IPU on the group's modelled clock and one for the link,
# checked by tests/profile/check_trace.py against the same run's --json
# (link bytes and transfers, the pipelined clock, the engines' counters)
# and with the two stages' runs overlapping.
MULTI_PROF := $(BUILD)/tests/multi/profile
.PHONY: check-multi-profile
check-multi-profile: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@rm -rf $(MULTI_PROF) && mkdir -p $(MULTI_PROF)
	/usr/bin/python3 tests/models/make_models.py $(MULTI_PROF) --only mlp >/dev/null
	$(IPU_COMPILE) --input-model $(MULTI_PROF)/mlp.onnx --target tiles=128,tile-mem=64KiB --num-ipus 2 -o $(MULTI_PROF)/mlp2.ipuef >/dev/null
	$(BUILD)/bin/ipu-run $(MULTI_PROF)/mlp2.ipuef --input x=$(MULTI_PROF)/mlp.in.x.npy --iterations 3 --inflight 4 \
	  --profile $(MULTI_PROF)/trace.json --json >$(MULTI_PROF)/run.json 2>$(MULTI_PROF)/run.err
	/usr/bin/python3 tests/profile/check_trace.py $(MULTI_PROF)/trace.json $(MULTI_PROF)/run.json - >$(MULTI_PROF)/check.txt \
	  || { cat $(MULTI_PROF)/check.txt; exit 1; }
	@echo "check-multi-profile: $$(grep -c '^ok' $(MULTI_PROF)/check.txt) passed, 0 failed: $$(grep 'link slices carry' $(MULTI_PROF)/check.txt | cut -d' ' -f3-8); $$(grep 'pairs of stage runs overlap' $(MULTI_PROF)/check.txt | sed 's/.*; //')"
CHECKS += ;make -s check-multi-profile;

# BERT-large-shaped fp32 encoder (tiny_encoder.py --large: 24 layers, d
# 1024, 16 heads, 1.2 GB of random weights, exported by torch) through the
# tools on full-size IPUs: ipu-compile --num-ipus 2 and 4, ipu-run (the
# ModelRunner on a group of in-process IPUs) within 1e-3 of torch's output
# scale.  About 6 minutes, 6 GB of memory and 4 GB of disk: not in make
# check (run it after changing the partition or the lowering's memory).
MULTI_LARGE := $(BUILD)/tests/multi/large
.PHONY: check-multi-large
check-multi-large: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@mkdir -p $(MULTI_LARGE)
	test -s $(MULTI_LARGE)/encoder.onnx || /usr/bin/python3 tests/multi/tiny_encoder.py $(MULTI_LARGE) --large
	@pass=0; for n in 2 4; do \
	  $(IPU_COMPILE) --input-model $(MULTI_LARGE)/encoder.onnx --num-ipus $$n -o $(MULTI_LARGE)/bert$$n.ipuef \
	    >$(MULTI_LARGE)/compile$$n.log 2>&1 || { tail -c 2000 $(MULTI_LARGE)/compile$$n.log; exit 1; }; \
	  $(BUILD)/bin/ipu-run $(MULTI_LARGE)/bert$$n.ipuef --input x=$(MULTI_LARGE)/x.npy --output y=$(MULTI_LARGE)/y$$n.npy \
	    --warmup 0 --iterations 1 --inflight 1 >$(MULTI_LARGE)/run$$n.log 2>&1 || { cat $(MULTI_LARGE)/run$$n.log; exit 1; }; \
	  /usr/bin/python3 -c 'import sys, numpy as np; y = np.load(sys.argv[1]); r = np.load(sys.argv[2]); e = float(np.abs(y - r).max() / np.abs(r).max()); print("check-multi-large: %s IPUs, %s; %.3g of torch'"'"'s output scale" % (sys.argv[3], open(sys.argv[4]).read().split("wrote ")[1].split(",")[1].strip(), e)); sys.exit(e >= 1e-3)' \
	    $(MULTI_LARGE)/y$$n.npy $(MULTI_LARGE)/y.npy $$n $(MULTI_LARGE)/compile$$n.log || exit 1; \
	  rm -f $(MULTI_LARGE)/bert$$n.ipuef; pass=$$((pass + 1)); done; \
	echo "check-multi-large: $$pass passed, 0 failed"

# One BERT-large-shaped layer (tiny_encoder.py DIR 1 --large: d 1024, 16
# heads, 50 MB of weights) over 4 IPUs of 160 and 256 tiles: a value of
# IPU 1 that IPUs 2 and 3 read (norm1's output) and the input x that IPUs
# 0 and 1 read each leave their IPU once per reader (link:...@ipu<K>);
# ipu-run on the in-process group within 1e-5 of torch's output scale.
MULTI_LAYER := $(BUILD)/tests/multi/large-layer
.PHONY: check-multi-bert-layer
check-multi-bert-layer: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump
	@mkdir -p $(MULTI_LAYER)
	test -s $(MULTI_LAYER)/encoder.onnx || /usr/bin/python3 tests/multi/tiny_encoder.py $(MULTI_LAYER) 1 --large >/dev/null
	@pass=0; for t in 160 256; do \
	  $(IPU_COMPILE) --input-model $(MULTI_LAYER)/encoder.onnx --num-ipus 4 --target tiles=$$t \
	    -o $(MULTI_LAYER)/bert4.ipuef >$(MULTI_LAYER)/compile$$t.log 2>&1 || { tail -c 2000 $(MULTI_LAYER)/compile$$t.log; exit 1; }; \
	  $(BUILD)/bin/ipuef-dump $(MULTI_LAYER)/bert4.ipuef | grep -q '^  link:.*@ipu[0-9]*$$' || { echo "check-multi-bert-layer: $$t tiles: no link to a second reader"; exit 1; }; \
	  $(BUILD)/bin/ipu-run $(MULTI_LAYER)/bert4.ipuef --input x=$(MULTI_LAYER)/x.npy --output y=$(MULTI_LAYER)/y$$t.npy \
	    --warmup 0 --iterations 1 --inflight 1 >$(MULTI_LAYER)/run$$t.log 2>&1 || { cat $(MULTI_LAYER)/run$$t.log; exit 1; }; \
	  /usr/bin/python3 -c 'import sys, numpy as np; y = np.load(sys.argv[1]); r = np.load(sys.argv[2]); e = float(np.abs(y - r).max() / np.abs(r).max()); print("check-multi-bert-layer: 4 IPUs of %s tiles, %s links: %.3g of torch'"'"'s output scale" % (sys.argv[3], sys.argv[4], e)); sys.exit(e >= 1e-5)' \
	    $(MULTI_LAYER)/y$$t.npy $(MULTI_LAYER)/y.npy $$t $$($(BUILD)/bin/ipuef-dump $(MULTI_LAYER)/bert4.ipuef | grep -c '^  link:') || exit 1; \
	  rm -f $(MULTI_LAYER)/bert4.ipuef; pass=$$((pass + 1)); done; \
	echo "check-multi-bert-layer: $$pass passed, 0 failed"
CHECKS += ;make -s check-multi-bert-layer;

# ipu-serve on the tests/models MLP split over 2 IPUs of 64 x 64 KiB:
# HTTP answers bit for bit ipu-run's, with and without --device, several
# clients at once and two instances (tests/multi/test_multi_serve.py).
.PHONY: check-multi-serve
check-multi-serve: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $(BUILD)/bin/ipu-serve
	BUILD=$(BUILD) /usr/bin/python3 tests/multi/test_multi_serve.py
CHECKS += ;make -s check-multi-serve;

# Micro-batches through the tools: a 4-layer 256-wide MLP exported at 32
# rows (tests/multi/mlp_wide.py), ipu-compile --num-ipus 2
# --enable-pipelining for IPUs of 64 x 64 KiB, ipu-run on a request of 256
# rows: the runner cuts it into 8 runs of 32 that pipeline through the two
# IPUs; the group's modelled clock at least 1.6x the same runs one stage
# after the other (modelled cycles: the same on every machine), a link
# transfer a run, torch's output within 1e-5 of its scale.
MULTI_PIPE := $(BUILD)/tests/multi/pipeline
.PHONY: check-multi-pipeline
check-multi-pipeline: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@rm -rf $(MULTI_PIPE) && mkdir -p $(MULTI_PIPE)
	/usr/bin/python3 tests/multi/mlp_wide.py $(MULTI_PIPE) 32 256
	$(IPU_COMPILE) --input-model $(MULTI_PIPE)/mlp.onnx --target tiles=64,tile-mem=64KiB --num-ipus 2 \
	  --enable-pipelining -o $(MULTI_PIPE)/mlp2.ipuef >/dev/null
	$(BUILD)/bin/ipu-run $(MULTI_PIPE)/mlp2.ipuef --input x=$(MULTI_PIPE)/x.npy --output y=$(MULTI_PIPE)/y2.npy \
	  --warmup 0 --iterations 1 --inflight 1 --json >$(MULTI_PIPE)/run.json
	/usr/bin/python3 -c 'import json, sys, numpy as np; d = sys.argv[1]; g = json.load(open(d + "/run.json"))["group"]; \
	  n, p, s = g["requests"], g["modelled_cycles_pipelined"], g["modelled_cycles_sequential"]; \
	  y, r = np.load(d + "/y2.npy"), np.load(d + "/y.npy"); e = float(np.abs(y - r).max() / np.abs(r).max()); \
	  ok = [n % 8 == 0 and n > 0, g["link_transfers"] == n, s >= 1.6 * p, y.shape == (256, 256) and e < 1e-5]; \
	  print("check-multi-pipeline: %d runs of 32 rows (%d requests of 256), modelled %d cycles pipelined vs %d one stage after the other (%.2fx), %d link transfers, %.2g of torch'"'"'s output scale" % (n, n // 8, p, s, s / p, g["link_transfers"], e)); \
	  print("check-multi-pipeline: %d passed, %d failed" % (sum(ok), len(ok) - sum(ok))); sys.exit(not all(ok))' $(MULTI_PIPE)
CHECKS += ;make -s check-multi-pipeline;

# The split MLP through the driver (tests/multi/test-multi-vm.sh mlp): over
# 2 and, pipelined, 4 of the VM's devices on one ipu-link (IPU_VM_IPUS=4),
# attached as one device group whose links carry the boundary tensors
# device to device; the output the in-process group's byte for byte, within
# 1e-3 of torch's; the MLP compiled for 32-tile IPUs refused on the
# 16-tile devices with the host's message (a link's receiver outside the
# peer's memory).  About 80 s of VM, 2 minutes in all.
.PHONY: check-multi-vm
check-multi-vm: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $$(KMOD) $$(VM_DIR)/bin/ipu-run
	BUILD=$(BUILD) tests/multi/test-multi-vm.sh mlp
CHECKS += ;make -s check-multi-vm;

# The same with BERT-large-shaped encoder layers (one over 2 IPUs, two
# over 4) on devices of 192 tiles of 624 KiB: 2 GiB of guest RAM, a few
# minutes: not part of make check.
.PHONY: check-multi-bert-vm
check-multi-bert-vm: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $$(KMOD) $$(VM_DIR)/bin/ipu-run
	BUILD=$(BUILD) tests/multi/test-multi-vm.sh bert

# The whole BERT-large-shaped encoder (24 layers, 1.2 GB of fp32 weights)
# over 4 full-size IPUs (1,472 tiles of 624 KiB each) in the VM: about 10 GB
# of host memory and 10-20 minutes: by hand, not part of make check.
.PHONY: check-multi-bert-large-vm
check-multi-bert-large-vm: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $$(KMOD) $$(VM_DIR)/bin/ipu-run
	BUILD=$(BUILD) tests/multi/test-multi-vm.sh bert-large
