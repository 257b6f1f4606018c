# Model tests (tests/models/README.md): an MLP, a ResNet-style CNN and a
# small transformer encoder, generated at test time with fixed seeds,
# compiled by ipu-compile in fp32 and fp16, run on the in-process device and
# compared with onnxruntime-node (or numpy).  Part of `make check`, once
# with the plain build and once with ipu-compile and ipu-run built with
# ASan+UBSan (build/san).
.PHONY: check-models check-models-san
check-models: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	BUILD=$(BUILD) tests/models/run-models.sh
check-models-san:
	tests/models/run-models.sh --san
CHECKS += ;tests/models/run-models.sh;
CHECKS += ;tests/models/run-models.sh --san;

# The model zoo (tests/models/zoo.py): torchvision classification networks
# and a transformer encoder from Debian's python3-torch/python3-torchvision,
# random weights, fixed seeds, exported to ONNX, compiled in fp32 and fp16,
# run on the in-process device and compared with PyTorch.  check-zoo (part
# of make check, about 30 s; each case also compiled with --no-memory-reuse
# and required to give a bit-identical output) runs small inputs; check-zoo-full the usual
# 224 x 224 and larger networks (minutes; the networks listed in
# ZOO_KNOWN_REFUSED, comma-separated, would still be refused by the compiler
# and reported as such: none are).
ZOO_KNOWN_REFUSED :=
.PHONY: check-zoo check-zoo-full
check-zoo: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@mkdir -p $(BUILD)/test-logs
	nice /usr/bin/python3 tests/models/zoo.py --bin $(BUILD)/bin --work $(BUILD)/zoo \
		--compare-no-reuse --log $(BUILD)/test-logs/zoo-results.txt
check-zoo-full: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@mkdir -p $(BUILD)/test-logs
	nice /usr/bin/python3 tests/models/zoo.py --bin $(BUILD)/bin --work $(BUILD)/zoo-full \
		--set full --allow-refused=$(ZOO_KNOWN_REFUSED) \
		--log $(BUILD)/test-logs/zoo-full-results.txt
CHECKS += ;make -s check-zoo;

# Batch sizes (tests/models/README.md): check-zoo-batch compiles every
# quick-set CNN at batch 1, 4 and 16 and the sequence models at batch 1 and
# 8 (about 15 minutes on this machine, not part of make check);
# check-zoo-batch-quick, part of make check, a mobile CNN at batch 4 (two
# pieces of one activation on one tile, which a vertex cannot read as one)
# and the encoder at batch 8.
.PHONY: check-zoo-batch check-zoo-batch-quick
check-zoo-batch: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@mkdir -p $(BUILD)/test-logs
	nice /usr/bin/python3 tests/models/zoo.py --bin $(BUILD)/bin --work $(BUILD)/zoo-batch \
		--batch 1,4,16 --seq-batch 1,8 --log $(BUILD)/test-logs/zoo-batch-results.txt
check-zoo-batch-quick: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@mkdir -p $(BUILD)/test-logs
	nice /usr/bin/python3 tests/models/zoo.py --bin $(BUILD)/bin --work $(BUILD)/zoo-batch-quick \
		--only mobilenet_v2,encoder --batch 4 --seq-batch 8 \
		--log $(BUILD)/test-logs/zoo-batch-quick-results.txt
CHECKS += ;make -s check-zoo-batch-quick;

# The BERT-base-shaped encoder of the full set at batch 8 and 16, fp32 and
# fp16, against PyTorch (about 2 minutes on this machine; not part of make
# check).
.PHONY: check-zoo-bert
check-zoo-bert: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@mkdir -p $(BUILD)/test-logs
	nice /usr/bin/python3 tests/models/zoo.py --bin $(BUILD)/bin --work $(BUILD)/zoo-bert \
		--set full --only encoder_bert_base --seq-batch 8,16 \
		--log $(BUILD)/test-logs/zoo-bert-results.txt

# Segmentation and window attention from the full set at batch 1 and 2,
# fp32 and fp16, against PyTorch: LRASPP and DeepLabV3 on MobileNetV3-Large
# (bilinear Resize, the "out" map at 224 x 224) and Swin-T (shifted
# windows: rolls, window partition reshapes, attention masks), 15 minutes
# of wall clock on this loaded machine (2 of CPU); not part of make check.
.PHONY: check-zoo-seg
check-zoo-seg: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@mkdir -p $(BUILD)/test-logs
	nice /usr/bin/python3 tests/models/zoo.py --bin $(BUILD)/bin --work $(BUILD)/zoo-seg \
		--set full --only lraspp_mobilenet_v3_large,deeplabv3_mobilenet_v3_large,swin_t \
		--batch 1,2 --log $(BUILD)/test-logs/zoo-seg-results.txt

# The fp8 precisions (tests/models/zoo_fp8.py): zoo networks compiled with
# --precision fp16, fp8_weight and fp8, against PyTorch and an independent
# fp8 emulation, with the executables' sizes (Documentation/compiler/fp8.md).
# --fp8-auto-skip's search lowers the model once per layer: its rows run on
# MobileNetV2, SqueezeNet and the encoder here; check-zoo-fp8-full adds
# ResNet-18's (several more minutes).
.PHONY: check-zoo-fp8 check-zoo-fp8-full
check-zoo-fp8: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@mkdir -p $(BUILD)/test-logs
	nice /usr/bin/python3 tests/models/zoo_fp8.py --bin $(BUILD)/bin --work $(BUILD)/zoo-fp8 \
		--auto-models mobilenet_v2,squeezenet1_1,encoder --log $(BUILD)/test-logs/zoo-fp8-results.json
CHECKS += ;make -s check-zoo-fp8;
check-zoo-fp8-full: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	@mkdir -p $(BUILD)/test-logs
	nice /usr/bin/python3 tests/models/zoo_fp8.py --bin $(BUILD)/bin --work $(BUILD)/zoo-fp8 \
		--log $(BUILD)/test-logs/zoo-fp8-results.json

# A quantized (QDQ) CNN (tests/models/qdq.py): weights' QDQ folded at
# compile time (the compile summary must say so), activations' QDQ computed
# on the device, fp32 and fp16, against onnxruntime-node (numpy without it).
.PHONY: check-qdq
check-qdq: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	/usr/bin/python3 tests/models/qdq.py --bin $(BUILD)/bin --work $(BUILD)/qdq
CHECKS += ;make -s check-qdq;

# A QDQ-quantized ResNet-18 (tests/models/qdq_resnet.py): torchvision's
# resnet18 (random weights, BatchNorm calibrated) in onnxruntime's QDQ form
# (int8 per-channel weights, uint8 per-tensor activations calibrated on
# seeded data), fp32 and fp16, against onnxruntime-node (numpy without it),
# judged in output steps as a 20-layer quantized network allows (about a
# minute and a half on this machine).
.PHONY: check-qdq-resnet
check-qdq-resnet: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	nice /usr/bin/python3 tests/models/qdq_resnet.py --bin $(BUILD)/bin --work $(BUILD)/qdq-resnet
CHECKS += ;make -s check-qdq-resnet;
