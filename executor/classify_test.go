package executor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		code    int
		stderr  string
		oomCode int
		want    policies.Failure
	}{
		{"success", 0, "CUDA out of memory", 0, policies.NoFailure},
		{"pytorch", 1, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", 0, policies.OOM},
		{"old pytorch", 1, "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB", 0, policies.OOM},
		{"cuda runtime", 1, "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported", 0, policies.OOM},
		{"cublas", 1, "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)", 0, policies.OOM},
		{"tensorflow", 1, "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[256,1024]", 0, policies.OOM},
		{"jax", 1, "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4294967296 bytes.", 0, policies.OOM},
		{"driver api", 1, "CUDA_ERROR_OUT_OF_MEMORY", 0, policies.OOM},
		{"oom exit code", 3, "killed", 3, policies.OOM},
		{"other exit code", 4, "killed", 3, policies.OtherFailure},
		{"python error", 1, "Traceback...\nValueError: bad shape", 0, policies.OtherFailure},
		{"signal", 137, "", 0, policies.OtherFailure},
		{"host memory is not GPU memory", 1, "MemoryError", 0, policies.OtherFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Classify(tc.code, []byte(tc.stderr), tc.oomCode))
		})
	}
}

// Only the tail of stderr is searched: an OOM message early in a long log
// that the job recovered from does not count.
func TestClassifyReadsTheTail(t *testing.T) {
	f := t.TempDir() + "/err"
	long := "CUDA out of memory\n" + strings.Repeat("x", TailBytes) + "\nValueError\n"
	require.NoError(t, writeFile(f, long))
	require.Equal(t, policies.OtherFailure, Classify(1, tail(f, TailBytes), 0))
	require.NoError(t, writeFile(f, "ok\nCUDA out of memory\n"))
	require.Equal(t, policies.OOM, Classify(1, tail(f, TailBytes), 0))
}
