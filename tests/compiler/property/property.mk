# The compiler's property test (tests/compiler/property/README.md): random
# graphs of Conv/MatMul/Gemm/elementwise/pooling/layout/Pad/Softmax/Reduce/CumSum/TopK/Gather ops, fp32
# and fp16, from a few elements to several times the device's memory, each
# compiled by ipu-compile and either run on the in-process device and
# compared with onnxruntime-node or refused with a message naming the
# memory needed and what the device has; plus the graphs of regress/.
# check-property (part of make check) runs 30 graphs of the fixed seed
# (size classes tiny to huge); property-long explores PROPERTY_COUNT graphs
# of PROPERTY_SEED in every class, device included, and keeps the failing
# ones in $(BUILD)/property-failing.
PROPERTY_COUNT ?= 300
PROPERTY_SEED ?= 1
.PHONY: check-property property-long
check-property: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	BUILD=$(BUILD) tests/compiler/property/run-property.sh
property-long: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	BUILD=$(BUILD) tests/compiler/property/run-property.sh --count $(PROPERTY_COUNT) \
		--seed $(PROPERTY_SEED) --classes tiny,small,medium,large,device,huge --keep-failing $(BUILD)/property-failing
CHECKS += ;tests/compiler/property/run-property.sh;
