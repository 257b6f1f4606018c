# The Python package's pytest suite (tests/python/run-pytest.sh), on the
# plain build's module.
CHECKS += ;tests/python/run-pytest.sh;
