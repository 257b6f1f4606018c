# Calibration and the precision report (compiler/calib/): .npz reading,
# losses, scale search, statistics, comparison, sensitivity ranking.
CFLAGS_tests_calib_ := $(COMPILER_CPPFLAGS)

CALIB_TESTS := $(BUILD)/tests/calib/test_calib

$(CALIB_TESTS:%=%.o): $(COMPILER_PB_H)

$(CALIB_TESTS): $(BUILD)/tests/calib/%: $(BUILD)/tests/calib/%.o $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(filter %.o,$^) $(COMPILER_LINK) $(LDLIBS_BASE)

TESTS += $(CALIB_TESTS)

# ipu-compile --precision-compare end to end on a torch-exported CNN.
CHECKS += ;/usr/bin/python3 tests/calib/check_precision_compare.py;
