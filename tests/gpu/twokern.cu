/* GPU fixture for tests/gpu/run.sh: two kernels whose run times are about 1:3 (each spins on the
 * SM clock), launched from two CPU call paths: main→path_light→launch_light and
 * main→path_heavy→launch_heavy, plus one host-to-device and one device-to-host copy.
 * usage: twokern [N [CYCLES]]   N launches of each kernel (default 20); light spins CYCLES SM
 *        cycles (default 2000000), heavy 3 × CYCLES. Prints "launched N N", then the kernels'
 *        total times measured with CUDA events: "light_ms X heavy_ms Y". */
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHECK(call)                                                                                \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "twokern: %s: %s\n", #call, cudaGetErrorString(e_));       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* Spins for cycles SM clock cycles; thread 0 leaves its elapsed count in out. */
__device__ void spin(long long cycles, long long *out)
{
	long long start = clock64(), now = start;

	while (now - start < cycles)
		now = clock64();
	if (threadIdx.x == 0)
		*out = now - start;
}

__global__ void light(long long cycles, long long *out)
{
	spin(cycles, out);
}

__global__ void heavy(long long cycles, long long *out)
{
	spin(3 * cycles, out + 1);
}

__attribute__((noinline)) static void launch_light(long long cycles, long long *out)
{
	light<<<1, 32>>>(cycles, out);
	CHECK(cudaGetLastError());
}

__attribute__((noinline)) static void launch_heavy(long long cycles, long long *out)
{
	heavy<<<1, 32>>>(cycles, out);
	CHECK(cudaGetLastError());
}

/* The light kernel's call path: n launches, timed with events around them. */
__attribute__((noinline)) static float path_light(int n, long long cycles, long long *out)
{
	cudaEvent_t a, b;
	float ms = 0;

	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	CHECK(cudaEventRecord(a));
	for (int i = 0; i < n; i++)
		launch_light(cycles, out);
	CHECK(cudaEventRecord(b));
	CHECK(cudaEventSynchronize(b));
	CHECK(cudaEventElapsedTime(&ms, a, b));
	return ms;
}

/* The heavy kernel's call path, the same way. */
__attribute__((noinline)) static float path_heavy(int n, long long cycles, long long *out)
{
	cudaEvent_t a, b;
	float ms = 0;

	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	CHECK(cudaEventRecord(a));
	for (int i = 0; i < n; i++)
		launch_heavy(cycles, out);
	CHECK(cudaEventRecord(b));
	CHECK(cudaEventSynchronize(b));
	CHECK(cudaEventElapsedTime(&ms, a, b));
	return ms;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	long long cycles = argc > 2 ? atoll(argv[2]) : 2000000, host[2] = { 0, 0 }, *dev = NULL;
	float light_ms, heavy_ms;

	CHECK(cudaMalloc(&dev, sizeof(host)));
	CHECK(cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice));
	light_ms = path_light(n, cycles, dev);
	heavy_ms = path_heavy(n, cycles, dev);
	CHECK(cudaMemcpy(host, dev, sizeof(host), cudaMemcpyDeviceToHost));
	CHECK(cudaFree(dev));
	printf("launched %d %d\n", n, n);
	printf("light_ms %.3f heavy_ms %.3f\n", light_ms, heavy_ms);
	return 0;
}
