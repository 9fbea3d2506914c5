"""torch.testing: assert_close (numeric comparison with torch's tolerances and messages) and
FileCheck (ordered text checks on graphs), as torch 1.13 has them."""
from ._comparison import assert_close
from ._file_check import FileCheck

__all__ = ["assert_close", "FileCheck"]
