"""The part of the `expecttest` package torch.testing._internal imports (Debian ships torch's test
infrastructure but not this PyPI package): its TestCase base and the ACCEPT flag."""
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    pass
