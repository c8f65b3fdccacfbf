/* The SIGBUS guard of mapped members (see member_guard.h).
 *
 * A copy through a member's shared mapping (member_file.c) faults with
 * SIGBUS when its page lies past the file's end (someone truncated the
 * member file) or is a hole tmpfs cannot fill. Without a guard that ends the
 * process; with it the copy returns -EIO and the engine fails the member as
 * on a disk error.
 *
 * How: each guarded copy records a recovery point (sigsetjmp) and the
 * mapping's range in a per-thread frame, then copies. The handler looks at
 * the faulting thread's frame: when there is one and the fault address lies
 * in its mapping, it jumps back to the recovery point (siglongjmp), which
 * unblocks SIGBUS (blocked by its delivery; sigsetjmp did not save the mask,
 * which would cost a system call per copy) and returns -EIO. Every other
 * SIGBUS goes on to the handler that was installed before ours (SIG_DFL:
 * reset to it, re-raised when the signal was sent rather than raised by a
 * fault, else the faulting instruction runs again and the default action
 * ends the process as it would have without us; SIG_IGN: ignored).
 *
 * Async-signal safety: the handler takes no lock, allocates nothing and
 * calls only sigaction, raise and siglongjmp. The only code it interrupts
 * and abandons is the guarded memcpy (the frame is set just around it, with
 * compiler signal fences so the copy stays inside): memcpy holds no lock and
 * keeps no state beyond the bytes copied, so jumping out of it leaves
 * nothing half done but a partial copy, which the -EIO reports. Locks the
 * caller holds around the copy are released by the caller on the way out as
 * for any error. The frame pointer is thread-local with the initial-exec
 * model, so reading it in the handler cannot allocate (a dynamic TLS block
 * may be allocated lazily on first use); it is a lock-free atomic pointer,
 * which C allows a handler to read. The previous action is read only after
 * it was stored, before our handler was installed, and never changes after.
 *
 * Process state: the installed flag, the previous action and the frames.
 * Installed only by member_map_guard_install (the public
 * uraid_member_map_guard_install), which the owner of the process calls. */
#include "member/member_guard.h"
#include "uraid.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

struct guard_frame {
	sigjmp_buf jb;
	int n;
	uintptr_t lo[MEMBER_MAP_RUN_MAX], hi[MEMBER_MAP_RUN_MAX]; /* the ranges: [lo, hi) */
};

static bool frame_holds(const struct guard_frame *f, uintptr_t addr)
{
	for (int i = 0; i < f->n; i++)
		if (addr >= f->lo[i] && addr < f->hi[i])
			return true;
	return false;
}

static _Thread_local struct guard_frame *_Atomic guard_frame
    __attribute__((tls_model("initial-exec")));

static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool guard_on;
static struct sigaction guard_prev;

static void guard_handler(int sig, siginfo_t *si, void *ctx)
{
	struct guard_frame *f = atomic_load_explicit(&guard_frame, memory_order_relaxed);
	uintptr_t addr = (uintptr_t)si->si_addr;
	if (f && si->si_code > 0 && frame_holds(f, addr))
		siglongjmp(f->jb, 1);
	if (guard_prev.sa_flags & SA_SIGINFO) {
		guard_prev.sa_sigaction(sig, si, ctx);
		return;
	}
	if (guard_prev.sa_handler == SIG_IGN)
		return;
	if (guard_prev.sa_handler == SIG_DFL) {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		sigaction(SIGBUS, &dfl, NULL);
		if (si->si_code <= 0) /* sent (kill, raise): send it again */
			raise(SIGBUS);
		return;
	}
	guard_prev.sa_handler(sig);
}

int member_map_guard_install(void)
{
	int rc = 0;
	pthread_mutex_lock(&guard_lock);
	if (!atomic_load(&guard_on)) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = guard_handler;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, NULL, &guard_prev) < 0 || sigaction(SIGBUS, &sa, NULL) < 0)
			rc = -errno;
		else
			atomic_store(&guard_on, true);
	}
	pthread_mutex_unlock(&guard_lock);
	return rc;
}

bool member_map_guard_installed(void)
{
	return atomic_load_explicit(&guard_on, memory_order_acquire);
}

int uraid_member_map_guard_install(void)
{
	return member_map_guard_install();
}

/* The guarded call: fr filled in by the caller. noinline: the frame and
 * the recovery point belong to this call alone. */
static __attribute__((noinline)) int guarded(struct guard_frame *fr, void (*fn)(void *), void *ctx)
{
	if (sigsetjmp(fr->jb, 0)) {
		atomic_store_explicit(&guard_frame, NULL, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		sigset_t bus;
		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		return -EIO;
	}
	atomic_store_explicit(&guard_frame, fr, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	fn(ctx);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&guard_frame, NULL, memory_order_relaxed);
	return 0;
}

struct copy_args {
	void *dst;
	const void *src;
	size_t n;
};

static void copy_fn(void *ctx)
{
	struct copy_args *c = ctx;
	memcpy(c->dst, c->src, c->n);
}

int member_map_copy(void *dst, const void *src, size_t n, const void *map, size_t map_len)
{
	struct guard_frame fr;
	fr.n = 1;
	fr.lo[0] = (uintptr_t)map;
	fr.hi[0] = fr.lo[0] + map_len;
	struct copy_args c = {dst, src, n};
	return guarded(&fr, copy_fn, &c);
}

int member_map_run(void (*fn)(void *ctx), void *ctx, void *const *addr, const size_t *len, int n)
{
	if (n < 0 || n > MEMBER_MAP_RUN_MAX)
		return -EINVAL;
	struct guard_frame fr;
	fr.n = n;
	for (int i = 0; i < n; i++) {
		fr.lo[i] = (uintptr_t)addr[i];
		fr.hi[i] = fr.lo[i] + len[i];
	}
	return guarded(&fr, fn, ctx);
}
