"""Build the optional compiled engine (repltool/binlog/_core.pyx).

Everything else is declared in setup.cfg.  Cython comes from pyproject's
build-system.requires; when the C compiler (or Cython) is missing, the build
of the extension is skipped with a warning and repltool installs as pure
Python (``repltool --version`` then says ``engine: python``).
"""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that turns a failed compile into a warning (pure-Python install)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any build failure means "no extension"
            self._skip(exc)

    def build_extension(self, ext: Extension) -> None:
        # first with zlib's crc32 (Debian's zlib1g-dev), then with the core's own table
        plain = (list(ext.define_macros), list(ext.libraries))
        ext.define_macros.append(("REPLTOOL_HAVE_ZLIB", "1"))
        ext.libraries.append("z")
        try:
            super().build_extension(ext)
            return
        except Exception:  # noqa: BLE001 - no zlib.h / libz: build without it
            ext.define_macros, ext.libraries = plain
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._skip(exc)

    @staticmethod
    def _skip(exc: Exception) -> None:
        print(f"repltool: WARNING: the compiled engine was not built ({exc}); "
              "installing the pure-Python engine")


def extensions() -> list[Extension]:
    ext = Extension("repltool.binlog._core", ["repltool/binlog/_core.pyx"],
                    extra_compile_args=["-O2"])
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("repltool: WARNING: Cython is not installed; installing the pure-Python engine")
        return []
    try:
        return cythonize([ext], language_level=3, quiet=True)
    except Exception as exc:  # noqa: BLE001 - the pure-Python engine is complete
        print(f"repltool: WARNING: Cython could not translate the engine ({exc}); "
              "installing the pure-Python engine")
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
