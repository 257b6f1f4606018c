# make install into a temporary prefix and a program built against it with
# pkg-config only (tests/install/test-install.sh).
.PHONY: check-install
check-install: all $(BUILD)/tests/modelrunner/gen_models
	tests/install/test-install.sh
CHECKS += ;make -s check-install;
