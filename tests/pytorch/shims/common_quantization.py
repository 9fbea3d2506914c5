"""torch.testing._internal.common_quantization: skipIfNoFBGEMM (ampjit has no quantized engine)."""
import unittest

skipIfNoFBGEMM = unittest.skip("ampjit has no FBGEMM quantized engine")
