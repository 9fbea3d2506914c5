"""torch.testing._internal.common_cuda: TEST_CUDA, whether a CUDA device is present."""
import ampjit as torch

TEST_CUDA = torch.cuda.is_available()
