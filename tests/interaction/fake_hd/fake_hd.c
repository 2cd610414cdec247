/* A fake OpenHaptics libHD for tests: the HD calls pyOpenHaptics 1.0 makes, on a scripted device.
 *
 * Built by tests/interaction/conftest.py with `cc -shared -fPIC -Wl,-soname,libHD.so`, so that the binding's
 * CDLL("libHD.so") finds it either through LD_LIBRARY_PATH or, in-process, by soname once preloaded.
 *
 * Device: a PHANToM Omni-like arm in OpenHaptics units (mm, mm/s, N; transform column-major, y up).
 * Its pose follows a trajectory read from the file named by FAKEHD_TRAJECTORY (or fakehd_load_trajectory):
 * one row per sample "t x y z qx qy qz qw buttons" in SI units (s, m), '#' starts a comment line;
 * linear interpolation of the position, normalised lerp of the quaternion, buttons held from the last sample.
 * Time runs from hdStartScheduler.  The scheduler is a thread calling the registered callbacks at FAKEHD_RATE
 * (default 1000 Hz).  Current-state get/set outside hdBeginFrame/hdEndFrame and unknown enums are errors,
 * counted by fakehd_error_count, so misuse by the binding or its caller shows in tests.
 * FAKEHD_NO_DEVICE=1 makes hdInitDevice fail as with no arm plugged in; FAKEHD_OUTPUT_DOF=6 makes it a 6-DOF
 * output arm (torques in mN m, 188 mN m continuous).
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned int HHD;
typedef unsigned int HDenum;
typedef unsigned int HDerror;
typedef unsigned int HDCallbackCode;
typedef unsigned long HDSchedulerHandle;
typedef HDCallbackCode (*HDSchedulerCallback)(void *);
typedef struct { HDerror errorCode; int internalErrorCode; HHD hHD; } HDErrorInfo;

#define HD_SUCCESS 0x0000
#define HD_INVALID_ENUM 0x0100
#define HD_INVALID_OPERATION 0x0103
#define HD_BAD_HANDLE 0x0104
#define HD_COMM_ERROR 0x0302
#define HD_INVALID_HANDLE 0xFFFFFFFFu
#define HD_CALLBACK_DONE 0
#define HD_CURRENT_BUTTONS 0x2000
#define HD_CURRENT_POSITION 0x2050
#define HD_CURRENT_VELOCITY 0x2051
#define HD_CURRENT_TRANSFORM 0x2052
#define HD_CURRENT_ANGULAR_VELOCITY 0x2053
#define HD_DEVICE_MODEL_TYPE 0x2501
#define HD_DEVICE_VENDOR 0x2503
#define HD_USABLE_WORKSPACE_DIMENSIONS 0x2551
#define HD_OUTPUT_DOF 0x2554
#define HD_UPDATE_RATE 0x2600
#define HD_NOMINAL_MAX_FORCE 0x2603
#define HD_NOMINAL_MAX_CONTINUOUS_FORCE 0x2604
#define HD_NOMINAL_MAX_TORQUE_CONTINUOUS_FORCE 0x2623
#define HD_CURRENT_FORCE 0x2700
#define HD_CURRENT_TORQUE 0x2701
#define HD_FORCE_OUTPUT 0x4000

#define MAX_CALLBACKS 16
#define MAX_ERRORS 64
#define FORCE_LOG 65536

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static int n_samples = 0;
static double *samples = NULL;                 /* rows of 9: t x y z qx qy qz qw buttons */
static double t_start = 0.0, rate = 1000.0;
static int output_dof = 3;
static int initialised = 0, in_frame = 0, force_enabled = 0, error_total = 0;
static HDerror errors[MAX_ERRORS];
static int n_errors = 0;
static HDerror injected = HD_SUCCESS;
static double frame_t = 0.0, frame_R[9], frame_p[3], frame_v[3], frame_w[3];
static int frame_buttons = 0;
static double force[3] = {0.0, 0.0, 0.0}, torque[3] = {0.0, 0.0, 0.0};
static double force_log[FORCE_LOG][4];
static long n_forces = 0, n_frames = 0;
static HDSchedulerCallback callbacks[MAX_CALLBACKS];
static void *callback_data[MAX_CALLBACKS];
static pthread_t scheduler;
static volatile int running = 0;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void push_error(HDerror code) {
    error_total++;
    if (n_errors < MAX_ERRORS) errors[n_errors++] = code;
}

int fakehd_load_trajectory(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    double row[9];
    pthread_mutex_lock(&mtx);
    n_samples = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        if (sscanf(line, "%lf %lf %lf %lf %lf %lf %lf %lf %lf", row, row + 1, row + 2, row + 3, row + 4, row + 5,
                   row + 6, row + 7, row + 8) != 9) continue;
        samples = realloc(samples, sizeof(double) * 9 * (n_samples + 1));
        memcpy(samples + 9 * n_samples++, row, sizeof row);
    }
    pthread_mutex_unlock(&mtx);
    fclose(f);
    return n_samples;
}

static void quat_to_R(const double *q, double *R) {  /* q = (x, y, z, w), R row-major */
    double x = q[0], y = q[1], z = q[2], w = q[3];
    R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - z * w); R[2] = 2 * (x * z + y * w);
    R[3] = 2 * (x * y + z * w); R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - x * w);
    R[6] = 2 * (x * z - y * w); R[7] = 2 * (y * z + x * w); R[8] = 1 - 2 * (x * x + y * y);
}

/* Sample the trajectory at time t into frame_* (caller holds mtx). */
static void sample(double t) {
    double q[4] = {0, 0, 0, 1}, s;
    int i = 0, k;
    memset(frame_p, 0, sizeof frame_p); memset(frame_v, 0, sizeof frame_v); memset(frame_w, 0, sizeof frame_w);
    frame_buttons = 0;
    if (n_samples > 0) {
        while (i + 1 < n_samples && samples[9 * (i + 1)] <= t) i++;
        const double *a = samples + 9 * i, *b = samples + 9 * (i + 1 < n_samples ? i + 1 : i);
        double dt = b[0] - a[0];
        s = (dt > 0 && t > a[0]) ? fmin((t - a[0]) / dt, 1.0) : 0.0;
        double sign = (a[4] * b[4] + a[5] * b[5] + a[6] * b[6] + a[7] * b[7]) < 0 ? -1.0 : 1.0, n = 0;
        for (k = 0; k < 3; k++) frame_p[k] = 1000.0 * (a[1 + k] + s * (b[1 + k] - a[1 + k]));
        for (k = 0; k < 4; k++) { q[k] = a[4 + k] + s * (sign * b[4 + k] - a[4 + k]); n += q[k] * q[k]; }
        for (k = 0; k < 4; k++) q[k] /= sqrt(n);
        if (dt > 0 && t < b[0]) {
            for (k = 0; k < 3; k++) frame_v[k] = 1000.0 * (b[1 + k] - a[1 + k]) / dt;
            /* w = 2 log(qb qa^-1) / dt, vector part of qb * conj(qa) */
            double ax = -a[4], ay = -a[5], az = -a[6], aw = a[7];
            double bx = sign * b[4], by = sign * b[5], bz = sign * b[6], bw = sign * b[7];
            double rx = bw * ax + bx * aw + by * az - bz * ay, ry = bw * ay - bx * az + by * aw + bz * ax;
            double rz = bw * az + bx * ay - by * ax + bz * aw, rw = bw * aw - bx * ax - by * ay - bz * az;
            double vn = sqrt(rx * rx + ry * ry + rz * rz), angle = 2.0 * atan2(vn, rw);
            if (vn > 1e-12) { frame_w[0] = rx / vn * angle / dt; frame_w[1] = ry / vn * angle / dt; frame_w[2] = rz / vn * angle / dt; }
        }
        frame_buttons = (int)a[8];
    }
    quat_to_R(q, frame_R);
    frame_t = t;
}

HHD hdInitDevice(const char *name) {
    (void)name;
    const char *absent = getenv("FAKEHD_NO_DEVICE"), *path = getenv("FAKEHD_TRAJECTORY"), *r = getenv("FAKEHD_RATE");
    if (absent && absent[0] == '1') { pthread_mutex_lock(&mtx); push_error(HD_COMM_ERROR); pthread_mutex_unlock(&mtx); return HD_INVALID_HANDLE; }
    if (path && fakehd_load_trajectory(path) < 0) { pthread_mutex_lock(&mtx); push_error(HD_COMM_ERROR); pthread_mutex_unlock(&mtx); return HD_INVALID_HANDLE; }
    const char *dof = getenv("FAKEHD_OUTPUT_DOF");
    if (r) rate = atof(r);
    output_dof = (dof && atoi(dof) == 6) ? 6 : 3;
    pthread_mutex_lock(&mtx);
    initialised = 1;
    n_forces = n_frames = error_total = n_errors = 0;
    sample(0.0);
    pthread_mutex_unlock(&mtx);
    return 0;
}

HHD hdGetCurrentDevice(void) { return initialised ? 0 : HD_INVALID_HANDLE; }

void hdDisableDevice(HHD h) {
    (void)h;
    const char *log = getenv("FAKEHD_FORCE_LOG");
    pthread_mutex_lock(&mtx);
    if (log) {
        FILE *f = fopen(log, "w");
        long first = n_forces > FORCE_LOG ? n_forces - FORCE_LOG : 0;
        for (long i = first; f && i < n_forces; i++) {
            double *e = force_log[i % FORCE_LOG];
            fprintf(f, "%.9f %.9f %.9f %.9f\n", e[0], e[1], e[2], e[3]);
        }
        if (f) fclose(f);
    }
    initialised = 0;
    memset(callbacks, 0, sizeof callbacks);              /* callbacks belong to the disabled device */
    pthread_mutex_unlock(&mtx);
}

void hdEnable(HDenum cap) {
    pthread_mutex_lock(&mtx);
    if (cap == HD_FORCE_OUTPUT) force_enabled = 1; else push_error(HD_INVALID_ENUM);
    pthread_mutex_unlock(&mtx);
}

HDErrorInfo hdGetError(void) {
    HDErrorInfo info = {HD_SUCCESS, 0, 0};
    pthread_mutex_lock(&mtx);
    if (n_errors > 0) {
        info.errorCode = errors[0];
        memmove(errors, errors + 1, sizeof(HDerror) * --n_errors);
    }
    pthread_mutex_unlock(&mtx);
    return info;
}

const char *hdGetString(HDenum what) {
    if (what == HD_DEVICE_MODEL_TYPE) return "PHANTOM Omni (fake)";
    if (what == HD_DEVICE_VENDOR) return "Articula tests";
    pthread_mutex_lock(&mtx); push_error(HD_INVALID_ENUM); pthread_mutex_unlock(&mtx);
    return "";
}

void hdBeginFrame(HHD h) {
    (void)h;
    pthread_mutex_lock(&mtx);
    if (in_frame) push_error(HD_INVALID_OPERATION);
    in_frame = 1;
    sample(now() - t_start);
    pthread_mutex_unlock(&mtx);
}

void hdEndFrame(HHD h) {
    (void)h;
    pthread_mutex_lock(&mtx);
    if (!in_frame) push_error(HD_INVALID_OPERATION);
    in_frame = 0;
    n_frames++;
    double *e = force_log[n_forces++ % FORCE_LOG];
    e[0] = frame_t;
    for (int k = 0; k < 3; k++) e[1 + k] = force_enabled ? force[k] : 0.0;
    if (injected != HD_SUCCESS) { push_error(injected); injected = HD_SUCCESS; }
    pthread_mutex_unlock(&mtx);
}

void hdGetDoublev(HDenum what, double *out) {
    pthread_mutex_lock(&mtx);
    int current = what >= HD_CURRENT_BUTTONS && what < 0x2500;
    if (current && !in_frame) push_error(HD_INVALID_OPERATION);
    switch (what) {
    case HD_CURRENT_TRANSFORM:
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++) out[4 * c + r] = frame_R[3 * r + c];
            out[12 + r] = frame_p[r];
            out[4 * r + 3] = 0.0;
        }
        out[15] = 1.0;
        break;
    case HD_CURRENT_POSITION: memcpy(out, frame_p, sizeof frame_p); break;
    case HD_CURRENT_VELOCITY: memcpy(out, frame_v, sizeof frame_v); break;
    case HD_CURRENT_ANGULAR_VELOCITY: memcpy(out, frame_w, sizeof frame_w); break;
    case HD_NOMINAL_MAX_FORCE: out[0] = 3.3; break;
    case HD_NOMINAL_MAX_CONTINUOUS_FORCE: out[0] = 0.88; break;
    case HD_NOMINAL_MAX_TORQUE_CONTINUOUS_FORCE:
        if (output_dof == 6) out[0] = 188.0; else push_error(HD_INVALID_ENUM);
        break;
    case HD_USABLE_WORKSPACE_DIMENSIONS: {
        double box[6] = {-80.0, -60.0, -35.0, 80.0, 60.0, 35.0};
        memcpy(out, box, sizeof box);
        break;
    }
    default: push_error(HD_INVALID_ENUM);
    }
    pthread_mutex_unlock(&mtx);
}

void hdGetIntegerv(HDenum what, int *out) {
    pthread_mutex_lock(&mtx);
    if (what == HD_CURRENT_BUTTONS) {
        if (!in_frame) push_error(HD_INVALID_OPERATION);
        out[0] = frame_buttons;
    } else if (what == HD_UPDATE_RATE) out[0] = (int)rate;
    else if (what == HD_OUTPUT_DOF) out[0] = output_dof;
    else push_error(HD_INVALID_ENUM);
    pthread_mutex_unlock(&mtx);
}

void hdSetDoublev(HDenum what, const double *value) {
    pthread_mutex_lock(&mtx);
    if (what != HD_CURRENT_FORCE && !(what == HD_CURRENT_TORQUE && output_dof == 6)) push_error(HD_INVALID_ENUM);
    else if (!in_frame) push_error(HD_INVALID_OPERATION);
    else memcpy(what == HD_CURRENT_FORCE ? force : torque, value, sizeof force);
    pthread_mutex_unlock(&mtx);
}

static void *scheduler_loop(void *arg) {
    (void)arg;
    struct timespec next;
    long period_ns = (long)(1e9 / rate);
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (running) {
        for (int i = 0; i < MAX_CALLBACKS; i++) {
            if (callbacks[i] && callbacks[i](callback_data[i]) == HD_CALLBACK_DONE) callbacks[i] = NULL;
        }
        next.tv_nsec += period_ns;
        while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec++; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    return NULL;
}

void hdStartScheduler(void) {
    if (running) return;
    t_start = now();
    running = 1;
    pthread_create(&scheduler, NULL, scheduler_loop, NULL);
    struct sched_param param = {.sched_priority = 20};          /* OpenHaptics' servo thread is real-time too */
    pthread_setschedparam(scheduler, SCHED_FIFO, &param);     /* ignored without the permission */
}

void hdStopScheduler(void) {
    if (!running) return;
    running = 0;
    pthread_join(scheduler, NULL);
}

HDSchedulerHandle hdScheduleAsynchronous(HDSchedulerCallback cb, void *data, unsigned short priority) {
    (void)priority;
    for (int i = 0; i < MAX_CALLBACKS; i++) {
        if (!callbacks[i]) { callback_data[i] = data; callbacks[i] = cb; return (HDSchedulerHandle)i; }
    }
    pthread_mutex_lock(&mtx); push_error(HD_INVALID_OPERATION); pthread_mutex_unlock(&mtx);
    return (HDSchedulerHandle)-1;
}

void hdScheduleSynchronous(HDSchedulerCallback cb, void *data, unsigned short priority) {
    (void)priority;
    while (cb(data) != HD_CALLBACK_DONE) {}
}

/* Test hooks. */
void fakehd_inject_error(unsigned int code) { pthread_mutex_lock(&mtx); injected = code; pthread_mutex_unlock(&mtx); }
int fakehd_error_count(void) { return error_total; }
long fakehd_frame_count(void) { return n_frames; }
void fakehd_last_force(double *out) { pthread_mutex_lock(&mtx); memcpy(out, force, sizeof force); pthread_mutex_unlock(&mtx); }
void fakehd_last_torque(double *out) { pthread_mutex_lock(&mtx); memcpy(out, torque, sizeof torque); pthread_mutex_unlock(&mtx); }

/* Copy the last (up to max) logged frames, rows (t, fx, fy, fz), oldest first; returns the count. */
long fakehd_force_log(double *out, long max) {
    pthread_mutex_lock(&mtx);
    long n = n_forces < FORCE_LOG ? n_forces : FORCE_LOG;
    if (n > max) n = max;
    for (long i = 0; i < n; i++) memcpy(out + 4 * i, force_log[(n_forces - n + i) % FORCE_LOG], sizeof(double) * 4);
    pthread_mutex_unlock(&mtx);
    return n;
}
