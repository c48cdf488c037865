/* embree_peer: casts the rays of a simvis ray file (see ../doc.go) with
 * Intel Embree, writes their ranges, then measures on request. Written for
 * simvis's peer benchmark (make bench-peers).
 *
 *   embree_peer RAYFILE RANGEFILE
 *
 * It commits the scene once, writes the ranges of rtcIntersect1 on one
 * thread (+Inf where nothing is hit) and prints one JSON line (Embree's
 * version, the build time, the ray count). Then each line on its standard
 * input, "THREADS SECONDS", asks for one measurement, answered by one JSON
 * line of rays per second: each way of casting (rtcIntersect1, and packets
 * of 4 and 8 with rtcIntersect4/8) runs over all rays for at least
 * SECONDS, on the calling thread alone (THREADS 1) or on it and THREADS-1
 * worker threads together: one pass over the rays is split into chunks of
 * 32 consecutive rays that the threads take in turn (an atomic counter),
 * and the pass ends when every chunk is cast, as simvis's CastBatch does.
 * The workers are started for the measurement and poll for the next pass
 * (see castPar), and are gone before the answer, so that nothing of this
 * program runs while simvis measures between two requests; every thread
 * casts into the one scene with its own context, and the parallel
 * rtcIntersect1 pass must find the very ranges written. It ends at the end
 * of its input. */
#include <embree3/rtcore.h>
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(const char *msg) {
	fprintf(stderr, "embree_peer: %s\n", msg);
	exit(1);
}

static void readn(FILE *f, void *p, size_t size, size_t n, const char *what) {
	if (fread(p, size, n, f) != n) {
		fprintf(stderr, "embree_peer: short read in %s\n", what);
		exit(1);
	}
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The rays: origins and unit directions, float64 in the file, float32 for
 * Embree (its rays are float32). */
static uint32_t nrays;
static float *ray; /* 6 per ray */

/* cast1 casts rays lo..hi-1 one by one with rtcIntersect1. */
static void cast1(RTCScene scene, uint32_t lo, uint32_t hi, double *out) {
	struct RTCIntersectContext ctx;
	rtcInitIntersectContext(&ctx);
	for (uint32_t i = lo; i < hi; i++) {
		struct RTCRayHit rh;
		const float *r = ray + 6 * (size_t)i;
		rh.ray.org_x = r[0], rh.ray.org_y = r[1], rh.ray.org_z = r[2];
		rh.ray.dir_x = r[3], rh.ray.dir_y = r[4], rh.ray.dir_z = r[5];
		rh.ray.tnear = 0, rh.ray.tfar = INFINITY, rh.ray.time = 0;
		rh.ray.mask = 0xFFFFFFFF, rh.ray.id = i, rh.ray.flags = 0;
		rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
		rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
		rtcIntersect1(scene, &ctx, &rh);
		if (out)
			out[i] = rh.hit.geomID == RTC_INVALID_GEOMETRY_ID ? INFINITY : rh.ray.tfar;
	}
}

/* castN casts rays lo..hi-1 in packets of N consecutive rays (neighbouring
 * beams: coherent); lo is a multiple of N. */
#define CASTN(N)                                                                   \
	static double cast##N(RTCScene scene, uint32_t lo, uint32_t hi) {              \
		struct RTCIntersectContext ctx;                                            \
		rtcInitIntersectContext(&ctx);                                             \
		double sum = 0;                                                            \
		for (uint32_t i = lo; i < hi; i += N) {                                    \
			struct RTCRayHit##N rh __attribute__((aligned(64)));                   \
			int valid[N] __attribute__((aligned(64)));                             \
			for (int k = 0; k < N; k++) {                                          \
				uint32_t j = i + k < hi ? i + k : hi - 1;                          \
				const float *r = ray + 6 * (size_t)j;                              \
				valid[k] = i + k < hi ? -1 : 0;                                    \
				rh.ray.org_x[k] = r[0], rh.ray.org_y[k] = r[1], rh.ray.org_z[k] = r[2]; \
				rh.ray.dir_x[k] = r[3], rh.ray.dir_y[k] = r[4], rh.ray.dir_z[k] = r[5]; \
				rh.ray.tnear[k] = 0, rh.ray.tfar[k] = INFINITY, rh.ray.time[k] = 0; \
				rh.ray.mask[k] = 0xFFFFFFFF, rh.ray.id[k] = j, rh.ray.flags[k] = 0; \
				rh.hit.geomID[k] = RTC_INVALID_GEOMETRY_ID;                        \
				rh.hit.instID[0][k] = RTC_INVALID_GEOMETRY_ID;                     \
			}                                                                      \
			rtcIntersect##N(valid, scene, &ctx, &rh);                              \
			for (int k = 0; k < N; k++)                                            \
				if (valid[k] && rh.hit.geomID[k] != RTC_INVALID_GEOMETRY_ID)       \
					sum += rh.ray.tfar[k];                                         \
		}                                                                          \
		return sum;                                                                \
	}
CASTN(4)
CASTN(8)

/* castWay casts rays lo..hi-1 the way w: 0 rtcIntersect1 (ranges into out,
 * if not NULL), 1 packets of 4, 2 packets of 8. */
static double castWay(RTCScene scene, int w, uint32_t lo, uint32_t hi, double *out) {
	switch (w) {
	case 0: cast1(scene, lo, hi, out); return 0;
	case 1: return cast4(scene, lo, hi);
	default: return cast8(scene, lo, hi);
	}
}

/* The parallel passes. A pass is posted by numbering it in pass (-1:
 * the workers stop) and in the high half of next, whose low half is the
 * next chunk to take: a participant takes a chunk only by a
 * compare-and-swap that finds its own pass there, so that one still busy
 * with an old pass can take nothing of a new one. done counts the chunks
 * cast: the caller waits for the chunks, not for the workers (a worker
 * that comes late, or is descheduled, holds nothing up), as simvis's
 * CastBatch does. Workers poll for a pass, pausing, and yield their core
 * between polls after 50 µs without one. Each counter sits on its own
 * cache line. */
#define PCHUNK 32
static RTCScene pscene;
static int pway;
static double *pout;
static _Alignas(64) atomic_long pass;
static long pbase; /* the pass the workers have seen when they start */
static _Alignas(64) atomic_ulong next;
static _Alignas(64) atomic_uint done;
static _Alignas(64) double psink[64 * 8];

static void parWork(int self, unsigned long p) {
	uint32_t chunks = (nrays + PCHUNK - 1) / PCHUNK;
	double sum = 0;
	unsigned long v = atomic_load_explicit(&next, memory_order_acquire);
	for (;;) {
		if (v >> 32 != (p & 0xffffffff) || (uint32_t)v >= chunks)
			break;
		if (!atomic_compare_exchange_weak_explicit(&next, &v, v + 1, memory_order_acq_rel, memory_order_acquire))
			continue;
		uint32_t lo = (uint32_t)v * PCHUNK, hi = lo + PCHUNK < nrays ? lo + PCHUNK : nrays;
		sum += castWay(pscene, pway, lo, hi, pout);
		atomic_fetch_add_explicit(&done, 1, memory_order_release);
		v = atomic_load_explicit(&next, memory_order_acquire);
	}
	psink[8 * (self % 64)] += sum;
}

static void *worker(void *arg) {
	int self = (int)(intptr_t)arg;
	long seen = pbase;
	for (;;) {
		long p;
		double t0 = now();
		while ((p = atomic_load_explicit(&pass, memory_order_acquire)) == seen) {
			_mm_pause();
			if (now() - t0 > 50e-6)
				sched_yield();
		}
		if (p < 0)
			return NULL;
		seen = p;
		parWork(self, (unsigned long)p);
	}
}

/* castPar makes one pass over all rays the way w on the calling thread and
 * the workers that come. */
static void castPar(int w, double *out) {
	uint32_t chunks = (nrays + PCHUNK - 1) / PCHUNK;
	pout = out;
	pway = w;
	long p = atomic_load_explicit(&pass, memory_order_relaxed) + 1;
	atomic_store_explicit(&done, 0, memory_order_relaxed);
	atomic_store_explicit(&next, (unsigned long)(p & 0xffffffff) << 32, memory_order_release);
	atomic_store_explicit(&pass, p, memory_order_release);
	parWork(0, (unsigned long)p);
	while (atomic_load_explicit(&done, memory_order_acquire) < chunks)
		_mm_pause();
}

/* measure runs pass() for at least seconds and returns rays per second. */
static double measure(double seconds, int nthreads, int w, RTCScene scene) {
	static volatile double sink;
	long n = 0;
	double t0 = now();
	do {
		if (nthreads > 1)
			castPar(w, NULL);
		else
			sink += castWay(scene, w, 0, nrays, NULL);
		n++;
	} while (now() - t0 < seconds);
	return (double)n * nrays / (now() - t0);
}

/* measureOn measures the three ways on nthreads threads (see the top). */
static void measureOn(RTCScene scene, int nthreads, double seconds, const double *ranges, double rate[3]) {
	if (nthreads == 1) {
		for (int w = 0; w < 3; w++)
			rate[w] = measure(seconds, 1, w, scene);
		return;
	}
	pscene = scene;
	pbase = atomic_load_explicit(&pass, memory_order_acquire);
	pthread_t th[64];
	for (int k = 1; k < nthreads; k++)
		if (pthread_create(&th[k], NULL, worker, (void *)(intptr_t)k) != 0)
			die("pthread_create failed");
	double *pr = malloc(sizeof(double) * (size_t)nrays + 1);
	if (!pr)
		die("out of memory");
	castPar(0, pr); /* warm-up, and the check */
	for (uint32_t i = 0; i < nrays; i++)
		if (memcmp(&pr[i], &ranges[i], sizeof(double)) != 0)
			die("the parallel rtcIntersect1 pass found other ranges than the serial one");
	free(pr);
	for (int w = 0; w < 3; w++)
		rate[w] = measure(seconds, nthreads, w, scene);
	long last = atomic_load_explicit(&pass, memory_order_acquire);
	atomic_store_explicit(&pass, -1, memory_order_release);
	for (int k = 1; k < nthreads; k++)
		pthread_join(th[k], NULL);
	atomic_store_explicit(&pass, last, memory_order_release);
}

int main(int argc, char **argv) {
	if (argc != 3)
		die("usage: embree_peer RAYFILE RANGEFILE (then THREADS SECONDS lines on stdin)");
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		die("cannot open the ray file");
	char magic[8];
	readn(f, magic, 1, 8, "header");
	if (memcmp(magic, "SVRAYS01", 8) != 0)
		die("not a simvis ray file (magic SVRAYS01)");
	uint32_t hdr[3];
	readn(f, hdr, 4, 3, "header");
	uint32_t nverts = hdr[0], ntris = hdr[1];
	nrays = hdr[2];
	if (nverts > (1u << 26) || ntris > (1u << 26) || nrays > (1u << 26))
		die("counts beyond 2^26");

	RTCDevice dev = rtcNewDevice("threads=1");
	if (!dev)
		die("rtcNewDevice failed");
	RTCScene scene = rtcNewScene(dev);
	rtcSetSceneBuildQuality(scene, RTC_BUILD_QUALITY_HIGH);
	RTCGeometry geom = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_TRIANGLE);
	float *v = rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), nverts);
	uint32_t *ix = rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(uint32_t), ntris);
	readn(f, v, 4, 3 * (size_t)nverts, "vertices");
	readn(f, ix, 4, 3 * (size_t)ntris, "indices");
	for (size_t i = 0; i < 3 * (size_t)ntris; i++)
		if (ix[i] >= nverts)
			die("index out of range");
	rtcCommitGeometry(geom);
	rtcAttachGeometry(scene, geom);
	rtcReleaseGeometry(geom);
	double t0 = now();
	rtcCommitScene(scene);
	double build = now() - t0;

	ray = malloc(6 * sizeof(float) * (size_t)nrays + 1);
	double *out = malloc(sizeof(double) * (size_t)nrays + 1);
	if (!ray || !out)
		die("out of memory");
	for (uint32_t i = 0; i < nrays; i++) {
		double r[6];
		readn(f, r, 8, 6, "rays");
		for (int k = 0; k < 6; k++)
			ray[6 * (size_t)i + k] = (float)r[k];
	}
	fclose(f);

	cast1(scene, 0, nrays, out); /* warm-up, and the ranges */
	FILE *o = fopen(argv[2], "wb");
	if (!o || fwrite(out, sizeof(double), nrays, o) != nrays || fclose(o) != 0)
		die("cannot write the ranges");
	printf("{\"embree\":\"%s\",\"build_s\":%.6f,\"rays\":%u}\n", RTC_VERSION_STRING, build, nrays);
	fflush(stdout);
	int nthreads;
	double seconds;
	while (scanf("%d %lf", &nthreads, &seconds) == 2) {
		if (nthreads < 1 || nthreads > 64)
			die("THREADS: want 1 to 64");
		if (!(seconds >= 0 && seconds <= 3600))
			die("SECONDS: want 0 to 3600");
		double rate[3];
		measureOn(scene, nthreads, seconds, out, rate);
		printf("{\"threads\":%d,\"intersect1_rays_per_s\":%.1f,\"intersect4_rays_per_s\":%.1f,"
		       "\"intersect8_rays_per_s\":%.1f}\n",
		       nthreads, rate[0], rate[1], rate[2]);
		fflush(stdout);
	}
	rtcReleaseScene(scene);
	rtcReleaseDevice(dev);
	return 0;
}
