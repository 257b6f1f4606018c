# SPDX-License-Identifier: MIT
"""pip install ./python: the `ipu` package.

The C extension is built by the project's own Makefile (`make python`, the
same rule `make` uses), with the static, position-independent archives of
libipurt and the compiler linked in, so the installed module needs no
library of ours at run time.  Works offline with Debian's setuptools:

    python3 -m venv --system-site-packages venv
    venv/bin/pip install --no-build-isolation ./python

IPU_BUILD names the build folder to use (default: build/ of the checkout).
"""

import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class MakeExtension(build_ext):
    """Builds ipu._ipu with `make python` and copies it into place."""

    def build_extension(self, ext):
        build = os.path.abspath(os.environ.get("IPU_BUILD", os.path.join(ROOT, "build")))
        jobs = str(os.cpu_count() or 1)
        subprocess.check_call(["make", "-C", ROOT, "-s", "-j", jobs, f"BUILD={build}",
                               f"PYTHON={sys.executable}", "python"])
        built = os.path.join(build, "python", "ipu",
                             "_ipu" + sysconfig.get_config_var("EXT_SUFFIX"))
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)


def version():
    with open(os.path.join(HERE, "ipu", "__init__.py")) as f:
        for line in f:
            if line.startswith("__version__"):
                return line.split('"')[1]
    raise RuntimeError("no __version__ in ipu/__init__.py")


setup(
    name="ipu",
    version=version(),
    description="IPU inference stack: run (.ipuef) and compile (ONNX) models",
    license="MIT",
    python_requires=">=3.11",
    packages=["ipu"],
    package_data={"ipu": ["*.pyi", "py.typed"]},
    ext_modules=[Extension("ipu._ipu", sources=[])],
    cmdclass={"build_ext": MakeExtension},
    install_requires=["numpy"],
    zip_safe=False,
)
