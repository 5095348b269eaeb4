package executor

import (
	"bytes"

	"github.com/aegis-sched/aegis/policies"
)

// oomPatterns are what the common frameworks print when the GPU runs out of
// memory: CUDA runtime and driver errors, PyTorch, TensorFlow and JAX/XLA.
var oomPatterns = [][]byte{
	[]byte("CUDA out of memory"),                     // PyTorch: torch.cuda.OutOfMemoryError: CUDA out of memory.
	[]byte("OutOfMemoryError"),                       // torch.OutOfMemoryError
	[]byte("CUDA error: out of memory"),              // CUDA runtime via PyTorch
	[]byte("cudaErrorMemoryAllocation"),              // CUDA runtime API
	[]byte("CUDA_ERROR_OUT_OF_MEMORY"),               // CUDA driver API
	[]byte("CUBLAS_STATUS_ALLOC_FAILED"),             // cuBLAS workspace
	[]byte("CUDNN_STATUS_ALLOC_FAILED"),              // cuDNN workspace
	[]byte("RESOURCE_EXHAUSTED"),                     // TensorFlow / XLA status code
	[]byte("ResourceExhaustedError"),                 // tf.errors.ResourceExhaustedError
	[]byte("OOM when allocating"),                    // TensorFlow allocator
	[]byte("Out of memory while trying to allocate"), // XLA (JAX)
}

// TailBytes is how much of an attempt's stderr is searched for OOM messages.
const TailBytes = 16 << 10

// Classify decides why an attempt that exited with a non-zero code failed:
// OOM when its stderr's tail matches a known out-of-memory message or the
// code is the workload's oom_exit_code (oomCode, 0 for none), anything else
// is a non-OOM failure. A zero code is NoFailure.
func Classify(code int, stderrTail []byte, oomCode int) policies.Failure {
	if code == 0 {
		return policies.NoFailure
	}
	if oomCode != 0 && code == oomCode {
		return policies.OOM
	}
	for _, p := range oomPatterns {
		if bytes.Contains(stderrTail, p) {
			return policies.OOM
		}
	}
	return policies.OtherFailure
}
