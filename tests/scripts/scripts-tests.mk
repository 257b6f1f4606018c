# The test harness itself (scripts/run-tests), against commands whose
# summaries are known.
.PHONY: check-harness
check-harness:
	tests/scripts/test-run-tests.sh
CHECKS += ;tests/scripts/test-run-tests.sh;

# scripts/vm-console: the VM's serial output as scripts/vm-run prints it
CHECKS += ;tests/scripts/test-vm-console.sh;
