# The test harness itself (scripts/run-tests), against commands whose
# summaries are known.
.PHONY: check-harness
check-harness:
	tests/scripts/test-run-tests.sh
CHECKS += ;tests/scripts/test-run-tests.sh;
