# The documentation against the tools (tests/docs/check_docs.py): options,
# exit statuses and sizes that Documentation/ and README.md state about
# ipu-compile, ipu-run, ipuef-dump, ipu-info, ipu-serve, ipu-reset and
# ipu-monitor, checked against their --help and behaviour.
.PHONY: check-docs
check-docs: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump $(BUILD)/bin/ipu-info \
		$(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-reset $(BUILD)/bin/ipu-monitor
	/usr/bin/python3 tests/docs/check_docs.py $(BUILD)/bin
CHECKS += ;make -s check-docs;
