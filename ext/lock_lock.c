/* Lock\Lock: one lock object on one resource of one store. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php_lock.h"

#include "zend_exceptions.h"
#include "zend_interfaces.h"

zend_class_entry *php_lock_ce_lock;

static zend_object_handlers php_lock_handlers;

#define THIS_LOCK() php_lock_from_obj(Z_OBJ_P(ZEND_THIS))

static lkc_store *php_lock_store_of(const php_lock_obj *lock)
{
	return lock->store;
}

/*
 * Auto-refresh ($autoRefresh): the core's thread refreshes a copy of the hold
 * (lock->refresher) between the lock's own operations. Each operation that
 * sends anything about the hold pauses it first (the thread then waits, and
 * the hold learns the expiry the thread's refreshes set) and resumes it after
 * (php_lock_auto_follow); a hold that is gone stops it (php_lock_track).
 */
static void php_lock_auto_pause(php_lock_obj *lock)
{
	if (lock->refresher != NULL) {
		lkc_auto_pause(lock->refresher, &lock->hold);
	}
}

/* The expiry the thread's last refresh set, for the getters. */
static void php_lock_auto_peek(php_lock_obj *lock)
{
	if (lock->refresher != NULL) {
		lkc_auto_peek(lock->refresher, &lock->hold);
	}
}

static void php_lock_auto_stop(php_lock_obj *lock)
{
	if (lock->refresher != NULL) {
		lkc_auto_stop(lock->refresher);
		lock->refresher = NULL;
	}
}

static lkc_rc php_lock_drop(php_lock_obj *lock, bool release);

/*
 * After an operation of the lock on its hold: refreshing goes on from the hold
 * as it is now (refreshed: the operation gave it ttl_ms from now), starts for a
 * new hold, or stops with the hold. False when it threw: the thread could not
 * start, and the hold just taken was given back.
 */
static bool php_lock_auto_follow(php_lock_obj *lock, int64_t ttl_ms, bool refreshed)
{
	lkc_err err;

	if (lock->hold.mode == LKC_MODE_NONE || lkc_hold_foreign(&lock->hold)) {
		php_lock_auto_stop(lock);
		return true;
	}
	if (lock->auto_ms == 0) {
		return true;
	}
	if (ttl_ms == LKC_TTL_NONE) {
		/* A hold without TTL has nothing to refresh. */
		php_lock_auto_stop(lock);
		return true;
	}
	lock->auto_ttl_ms = ttl_ms;
	if (lock->refresher != NULL) {
		lkc_auto_resume(lock->refresher, &lock->hold, ttl_ms, lock->auto_until_ns, refreshed);
		return true;
	}
	/* A new hold: a bound counts from its acquisition. */
	lock->auto_until_ns = lock->auto_ms > 0 ? lkc_now_ns() + (uint64_t) lock->auto_ms * 1000000u : 0;
	lkc_err_clear(&err);
	if (lkc_auto_start(php_lock_store_of(lock), &lock->hold, ttl_ms, 0, lock->auto_until_ns, &lock->refresher, &err)
		!= LKC_OK) {
		php_lock_drop(lock, true);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	return true;
}

/* Keeps the registry of held locks in step with the hold, so request shutdown finds them. */
static void php_lock_track(php_lock_obj *lock)
{
	/* A failed acquire that may have taken the hold after all counts too: request end gives that back. */
	bool held = lock->hold.mode != LKC_MODE_NONE || lock->hold.unsure;

	if (lock->hold.mode == LKC_MODE_NONE) {
		php_lock_auto_stop(lock);
	}
	if (held && !lock->registered) {
		lock->prev = NULL;
		lock->next = LOCK_G(held);
		if (lock->next) {
			lock->next->prev = lock;
		}
		LOCK_G(held) = lock;
		lock->registered = true;
	} else if (!held && lock->registered) {
		if (lock->prev) {
			lock->prev->next = lock->next;
		} else {
			LOCK_G(held) = lock->next;
		}
		if (lock->next) {
			lock->next->prev = lock->prev;
		}
		lock->prev = lock->next = NULL;
		lock->registered = false;
	}
}

/*
 * Gives a hold up without ever throwing: automatic release drops a hold found
 * lost or a backend found down. A hold inherited from a parent process is
 * dropped locally and left alone.
 */
static lkc_rc php_lock_drop(php_lock_obj *lock, bool release)
{
	lkc_store *store;
	lkc_err err;
	lkc_rc rc = LKC_OK;

	if (lock->hold.mode == LKC_MODE_NONE && lock->hold.fd < 0 && !lock->hold.unsure) {
		php_lock_track(lock);
		return rc;
	}
	store = php_lock_store_of(lock);
	if (lock->refresher != NULL && !release && !lock->auto_release && !lkc_hold_foreign(&lock->hold)) {
		/*
		 * A hold without autoRelease outlives its lock object and goes on being refreshed,
		 * within its bound. One dropped without a release for another reason (its store
		 * was found away at request end) runs out its TTL.
		 */
		lkc_auto_detach(lock->refresher);
		lock->refresher = NULL;
	}
	php_lock_auto_pause(lock);
	if (lkc_hold_foreign(&lock->hold) || !release) {
		lkc_abandon(store, &lock->hold);
	} else {
		lkc_err_clear(&err);
		rc = lkc_release(store, &lock->hold, 0, &err);
		if (rc != LKC_OK) {
			lkc_abandon(store, &lock->hold);
		}
	}
	/* One try is all a dropped lock gets: a hold a failed acquire left stays until its TTL. */
	lock->hold.unsure = 0;
	php_lock_track(lock);
	return rc;
}

/*
 * A flock or semaphore hold whose lock object let go of it without autoRelease:
 * it lasts until restoreLock() in this process adopts it, or the process ends.
 * The list lives in the module globals, across requests (an FPM worker's).
 */
typedef struct php_lock_parked {
	lkc_store *store;            /* retained */
	lkc_hold hold;
	struct php_lock_parked *next;
} php_lock_parked;

/* Whether the lock's hold must outlive the object: no autoRelease, on a store that cannot keep it otherwise. */
static bool php_lock_parks(const php_lock_obj *lock)
{
	return !lock->auto_release && (php_lock_store_of(lock)->ops->caps & LKC_CAP_PROCESS_BOUND)
		&& lock->hold.mode != LKC_MODE_NONE && !lkc_hold_foreign(&lock->hold);
}

/* Moves the lock's hold to the parked list; the lock is left holding nothing. */
static void php_lock_park(php_lock_obj *lock)
{
	php_lock_parked *parked = malloc(sizeof(*parked));

	if (parked == NULL) {
		/* Nowhere to keep it: the hold goes, as a released one would. */
		php_lock_drop(lock, true);
		return;
	}
	parked->store = php_lock_store_of(lock);
	lkc_store_retain(parked->store);
	parked->hold = lock->hold;
	parked->next = LOCK_G(parked);
	LOCK_G(parked) = parked;
	/* The parked copy owns the resource name, the file and its path now. */
	lock->hold.resource = NULL;
	lock->hold.path = NULL;
	lock->hold.fd = -1;
	lock->hold.session = NULL;
	lock->hold.mode = LKC_MODE_NONE;
	lock->hold.unsure = 0;
	php_lock_track(lock);
}

/* Lets go of a lock object's hold: released, kept until its TTL, or parked. */
static void php_lock_let_go(php_lock_obj *lock)
{
	if (php_lock_parks(lock)) {
		php_lock_park(lock);
	} else {
		/* A Redis hold without autoRelease stays until its TTL: it is only forgotten here. */
		php_lock_drop(lock, lock->auto_release);
	}
}

/* How many stores request end remembers as unreachable; holds of stores beyond that are tried each. */
#define PHP_LOCK_GONE_MAX 16

void php_lock_release_all(void)
{
	/*
	 * A store that could not be reached (a timeout, a dropped connection) costs
	 * request end one timeout, not one per hold: its other holds are dropped
	 * locally and live out their TTLs.
	 */
	lkc_store *gone[PHP_LOCK_GONE_MAX];
	int ngone = 0;

	/* Parking and dropping always leave the hold empty, so each pass unlinks one lock. */
	while (LOCK_G(held) != NULL) {
		php_lock_obj *lock = LOCK_G(held);
		lkc_store *store = php_lock_store_of(lock);
		bool release = lock->auto_release;

		if (php_lock_parks(lock)) {
			php_lock_park(lock);
			continue;
		}
		for (int i = 0; i < ngone && release; i++) {
			release = gone[i] != store;
		}
		if (php_lock_drop(lock, release) == LKC_ERR_IO && ngone < PHP_LOCK_GONE_MAX) {
			gone[ngone++] = store;
		}
	}
}

void php_lock_release_parked(void)
{
	while (LOCK_G(parked) != NULL) {
		php_lock_parked *parked = LOCK_G(parked);
		lkc_err err;

		LOCK_G(parked) = parked->next;
		lkc_err_clear(&err);
		/* A forked child's copy of its parent's hold is the parent's: left alone. */
		if (lkc_hold_foreign(&parked->hold) || lkc_release(parked->store, &parked->hold, 0, &err) != LKC_OK) {
			lkc_abandon(parked->store, &parked->hold);
		}
		lkc_hold_dispose(&parked->hold);
		lkc_store_release(parked->store);
		free(parked);
	}
}

/*
 * Takes over the parked hold of owner on resource, made on a store of the
 * lock's kind and namespace by this process; false when there is none.
 */
static bool php_lock_unpark(php_lock_obj *lock, zend_string *owner)
{
	lkc_store *store = php_lock_store_of(lock);

	for (php_lock_parked **link = &LOCK_G(parked); *link != NULL; link = &(*link)->next) {
		php_lock_parked *parked = *link;
		const lkc_hold *h = &parked->hold;

		if (!lkc_store_same(parked->store, store) || lkc_hold_foreign(h)
			|| h->resource_len != lock->hold.resource_len
			|| memcmp(h->resource, lock->hold.resource, h->resource_len) != 0
			|| h->owner_len != ZSTR_LEN(owner) || memcmp(h->owner, ZSTR_VAL(owner), h->owner_len) != 0) {
			continue;
		}
		*link = parked->next;
		lkc_hold_dispose(&lock->hold);
		lock->hold = parked->hold;
		/* The hold goes back through the store that took it (the semaphore store keeps its set for it). */
		lkc_store_release(lock->store);
		lock->store = parked->store;
		free(parked);
		php_lock_track(lock);
		return true;
	}
	return false;
}

static zend_object *php_lock_create(zend_class_entry *ce)
{
	php_lock_obj *lock = zend_object_alloc(sizeof(php_lock_obj), ce);

	zend_object_std_init(&lock->std, ce);
	object_properties_init(&lock->std, ce);
	lock->std.handlers = &php_lock_handlers;
	lock->hold.fd = -1;
	lock->hold.semid = -1;
	lock->hold.fence = -1;
	return &lock->std;
}

static void php_lock_free(zend_object *obj)
{
	php_lock_obj *lock = php_lock_from_obj(obj);

	if (lock->ready) {
		php_lock_let_go(lock);
		php_lock_auto_stop(lock);
		lkc_hold_dispose(&lock->hold);
		lkc_store_release(lock->store);
	}
	zend_object_std_dtor(&lock->std);
}

/* Checks an owner argument: 1 to LKC_OWNER_MAX bytes of any kind. */
static bool php_lock_owner_arg(zend_string *owner, uint32_t arg_num)
{
	if (ZSTR_LEN(owner) == 0 || ZSTR_LEN(owner) > LKC_OWNER_MAX) {
		zend_argument_value_error(arg_num, "must be 1 to %d bytes long, %zu given", LKC_OWNER_MAX, ZSTR_LEN(owner));
		return false;
	}
	return true;
}

bool php_lock_init(php_lock_obj *lock, zend_string *resource, lkc_store *store,
	int64_t ttl_ms, bool auto_release, zend_string *owner, uint32_t owner_arg)
{
	lkc_err err;

	if (owner != NULL && !php_lock_owner_arg(owner, owner_arg)) {
		return false;
	}
	lkc_err_clear(&err);
	if (lkc_hold_init(&lock->hold, ZSTR_VAL(resource), ZSTR_LEN(resource), &err) != LKC_OK) {
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	if (owner != NULL && lkc_hold_set_owner(&lock->hold, ZSTR_VAL(owner), ZSTR_LEN(owner), &err) != LKC_OK) {
		lkc_hold_dispose(&lock->hold);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	lkc_store_retain(store);
	lock->store = store;
	lock->ttl_ms = ttl_ms;
	lock->auto_release = auto_release;
	lock->ready = true;
	return true;
}

/* Refuses a lock object whose constructor did not run. */
static bool php_lock_ready(php_lock_obj *lock)
{
	if (!lock->ready) {
		zend_throw_error(NULL, "Lock\\Lock object is not initialized");
		return false;
	}
	return true;
}

ZEND_METHOD(Lock_Lock, __construct)
{
	php_lock_obj *lock = THIS_LOCK();
	zend_string *resource;
	zend_object *store;
	double ttl = 300.0;
	bool ttl_null = false;
	bool auto_release = true;
	zend_string *owner = NULL;
	zval *auto_refresh = NULL;
	int64_t ttl_ms, auto_ms;

	ZEND_PARSE_PARAMETERS_START(2, 6)
		Z_PARAM_STR(resource)
		Z_PARAM_OBJ_OF_CLASS(store, php_lock_ce_store)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(ttl, ttl_null)
		Z_PARAM_BOOL(auto_release)
		Z_PARAM_STR_OR_NULL(owner)
		Z_PARAM_ZVAL(auto_refresh)
	ZEND_PARSE_PARAMETERS_END();

	if (lock->ready) {
		zend_throw_error(NULL, "Lock\\Lock object is already constructed");
		RETURN_THROWS();
	}
	if (!php_lock_resource_arg(resource, 1) || !php_lock_ttl_arg(ttl, ttl_null, 3, &ttl_ms)) {
		RETURN_THROWS();
	}
	if (php_lock_store_from_obj(store)->store == NULL) {
		zend_argument_type_error(2, "must be an initialized store");
		RETURN_THROWS();
	}
	if (!php_lock_auto_refresh_arg(auto_refresh, 6, &auto_ms)) {
		RETURN_THROWS();
	}
	if (!php_lock_init(lock, resource, php_lock_store_from_obj(store)->store, ttl_ms, auto_release, owner, 5)) {
		RETURN_THROWS();
	}
	lock->auto_ms = auto_ms;
}

/* Parses the (blocking, timeout) pair into a core wait: 0, a bound or forever. */
static bool php_lock_wait_arg(bool blocking, double timeout, bool timeout_null, uint32_t arg_num, int64_t *wait_ms)
{
	if (!timeout_null) {
		return php_lock_seconds_to_ms(timeout, arg_num, true, wait_ms);
	}
	*wait_ms = blocking ? LKC_WAIT_FOREVER : 0;
	return true;
}

/*
 * Another lock object of this request that holds the resource under the same
 * owner (one the caller chose, or a restored one). The store would take that
 * hold for ours (a Redis script knows holds by their owner), yet two lock
 * objects conflict even with one owner: only restoreLock() adopts a hold.
 */
static php_lock_obj *php_lock_same_owner(const php_lock_obj *lock)
{
	const lkc_hold *mine = &lock->hold;

	if (!mine->owner_chosen) {
		/* A random token is this object's alone. */
		return NULL;
	}
	for (php_lock_obj *other = LOCK_G(held); other != NULL; other = other->next) {
		const lkc_hold *theirs = &other->hold;

		if (other != lock && theirs->mode != LKC_MODE_NONE && lkc_store_same(php_lock_store_of(other), php_lock_store_of(lock))
			&& theirs->owner_len == mine->owner_len && memcmp(theirs->owner, mine->owner, mine->owner_len) == 0
			&& theirs->resource_len == mine->resource_len
			&& memcmp(theirs->resource, mine->resource, mine->resource_len) == 0) {
			return other;
		}
	}
	return NULL;
}

/*
 * Whether another lock object of this request holds the resource under the same
 * owner. What it believes is asked of the store: a release through a restored
 * object (or a TTL) may have ended that hold behind its back, and a stale belief
 * must not keep the owner out.
 */
static bool php_lock_same_owner_holds(const php_lock_obj *lock)
{
	php_lock_obj *other;

	while ((other = php_lock_same_owner(lock)) != NULL) {
		lkc_err err;
		lkc_rc rc;

		lkc_err_clear(&err);
		rc = lkc_check(php_lock_store_of(other), &other->hold, &err);
		if (rc != LKC_EXPIRED && rc != LKC_LOST) {
			/* Still held, or the store cannot say: the other object holds it as far as we know. */
			return true;
		}
		lkc_abandon(php_lock_store_of(other), &other->hold);
		php_lock_track(other);
	}
	return false;
}

/*
 * Takes the hold (or refreshes one we have); true when held, false when busy or it threw.
 * Inline, so that acquire()'s system call runs as few calls deep as it can (see lkc.h).
 */
static zend_always_inline bool php_lock_take(php_lock_obj *lock, lkc_mode mode, int64_t wait_ms)
{
	lkc_store *store = php_lock_store_of(lock);
	lkc_err err;
	lkc_rc rc;

	lkc_err_clear(&err);
	php_lock_auto_pause(lock);
	if (lock->hold.mode == mode && !lkc_hold_foreign(&lock->hold)) {
		/* Held already: acquiring again extends the hold. */
		rc = lkc_refresh(store, &lock->hold, lock->ttl_ms, &err);
		/* A restored hold learns its real mode here: a read hold asked to be exclusive converts below. */
		if (rc == LKC_OK && lock->hold.mode == mode) {
			return php_lock_auto_follow(lock, lock->ttl_ms, true);
		}
		if (rc != LKC_OK && rc != LKC_EXPIRED && rc != LKC_LOST) {
			php_lock_auto_follow(lock, lock->ttl_ms, false);
			php_lock_throw(rc, &err, &lock->hold);
			return false;
		}
		if (rc != LKC_OK) {
			/* The old hold is gone: drop what is left of it and take a new one. */
			lkc_abandon(store, &lock->hold);
			php_lock_track(lock);
		}
	}
	if (lock->hold.mode == LKC_MODE_NONE && php_lock_same_owner_holds(lock)) {
		php_lock_auto_follow(lock, lock->ttl_ms, false);
		if (wait_ms == 0) {
			lkc_stats_add(store, LKC_STAT_FAILED);
			return false;
		}
		/* Nothing but this request can end that hold: waiting for it would wait for ourselves. */
		lkc_err_set(&err, LKC_ERR_STATE,
			"another lock object of this process holds it under the same owner; waiting for it would never end");
		php_lock_throw(err.code, &err, &lock->hold);
		return false;
	}
	rc = lkc_acquire(store, &lock->hold, mode, lock->ttl_ms, wait_ms, &err);
	php_lock_track(lock);
	/* A conversion that failed keeps the hold as it was: its refreshing goes on. */
	if (!php_lock_auto_follow(lock, lock->ttl_ms, rc == LKC_OK)) {
		return false;
	}
	switch (rc) {
		case LKC_OK:
			return true;
		case LKC_BUSY:
		case LKC_INTERRUPTED:
			return false;
		default:
			php_lock_throw(rc, &err, &lock->hold);
			return false;
	}
}

/* acquire() and acquireRead(): take (or convert) the hold in mode. */
static void php_lock_acquire_method(INTERNAL_FUNCTION_PARAMETERS, lkc_mode mode)
{
	php_lock_obj *lock = THIS_LOCK();
	bool blocking = false;
	double timeout = 0;
	bool timeout_null = true;
	int64_t wait_ms;
	bool held;

	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_BOOL(blocking)
		Z_PARAM_DOUBLE_OR_NULL(timeout, timeout_null)
	ZEND_PARSE_PARAMETERS_END();

	if (!php_lock_ready(lock) || !php_lock_wait_arg(blocking, timeout, timeout_null, 2, &wait_ms)) {
		RETURN_THROWS();
	}
	if (mode == LKC_MODE_SHARED && !(php_lock_store_of(lock)->ops->caps & LKC_CAP_SHARED)) {
		/* A store without shared holds takes an exclusive one, as Symfony's Lock does (API.md). */
		mode = LKC_MODE_EXCLUSIVE;
	}
	held = php_lock_take(lock, mode, wait_ms);
	if (EG(exception)) {
		RETURN_THROWS();
	}
	RETURN_BOOL(held);
}

ZEND_METHOD(Lock_Lock, acquire)
{
	php_lock_acquire_method(INTERNAL_FUNCTION_PARAM_PASSTHRU, LKC_MODE_EXCLUSIVE);
}

ZEND_METHOD(Lock_Lock, acquireRead)
{
	php_lock_acquire_method(INTERNAL_FUNCTION_PARAM_PASSTHRU, LKC_MODE_SHARED);
}

/*
 * Gives back, after run()'s callback, what run() took: a hold it took is released,
 * a read hold it promoted is demoted again. When the callback threw, its exception
 * stays the one thrown: a failure here then only clears the hold locally.
 */
static void php_lock_after_run(php_lock_obj *lock, lkc_mode before)
{
	lkc_store *store = php_lock_store_of(lock);
	bool threw = EG(exception) != NULL;
	lkc_err err;
	lkc_rc rc;

	if (lock->hold.mode == LKC_MODE_NONE || lock->hold.mode == before || lkc_hold_foreign(&lock->hold)) {
		return;
	}
	lkc_err_clear(&err);
	php_lock_auto_pause(lock);
	if (before == LKC_MODE_SHARED) {
		rc = lkc_acquire(store, &lock->hold, LKC_MODE_SHARED, lock->ttl_ms, 0, &err);
	} else {
		rc = lkc_release(store, &lock->hold, 0, &err);
	}
	if (rc != LKC_OK && threw) {
		lkc_abandon(store, &lock->hold);
	}
	php_lock_track(lock);
	php_lock_auto_follow(lock, lock->ttl_ms, rc == LKC_OK);
	if (rc != LKC_OK && !threw) {
		php_lock_throw(rc, &err, &lock->hold);
	}
}

ZEND_METHOD(Lock_Lock, run)
{
	php_lock_obj *lock = THIS_LOCK();
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	double timeout = 0;
	bool timeout_null = true;
	int64_t wait_ms;
	zval arg;
	bool bailed = false;
	lkc_mode before;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_FUNC(fci, fcc)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(timeout, timeout_null)
	ZEND_PARSE_PARAMETERS_END();

	if (!php_lock_ready(lock) || !php_lock_wait_arg(true, timeout, timeout_null, 2, &wait_ms)) {
		RETURN_THROWS();
	}
	/* run() gives back only what it takes: a hold it finds stays as it was. */
	before = lkc_hold_foreign(&lock->hold) ? LKC_MODE_NONE : lock->hold.mode;
	if (!php_lock_take(lock, LKC_MODE_EXCLUSIVE, wait_ms)) {
		if (zend_atomic_bool_load_ex(&EG(timed_out))) {
			/*
			 * The time limit ended the wait: its fatal error comes as run() returns, at the
			 * caller's line. An exception thrown first would be where the engine reports it,
			 * a place of no line ("Unknown on line 0").
			 */
			RETURN_NULL();
		}
		if (!EG(exception)) {
			lkc_err err;
			if (timeout_null) {
				lkc_err_set(&err, LKC_BUSY, "not acquired: the wait was interrupted");
			} else {
				lkc_err_set(&err, LKC_BUSY, "not acquired within %.3f s", timeout);
			}
			php_lock_throw(LKC_BUSY, &err, &lock->hold);
		}
		RETURN_THROWS();
	}

	ZVAL_OBJ(&arg, &lock->std);
	fci.retval = return_value;
	fci.params = &arg;
	fci.param_count = 1;
	/* A fatal error or time limit in the callback must not leave the hold behind. */
	zend_try {
		zend_call_function(&fci, &fcc);
	} zend_catch {
		bailed = true;
	} zend_end_try();
	if (bailed) {
		if (before == LKC_MODE_NONE) {
			php_lock_drop(lock, true);
		}
		zend_bailout();
	}
	php_lock_after_run(lock, before);
	if (EG(exception)) {
		zval_ptr_dtor(return_value);
		ZVAL_UNDEF(return_value);
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Lock, refresh)
{
	php_lock_obj *lock = THIS_LOCK();
	double ttl = 0;
	bool ttl_null = true;
	int64_t ttl_ms;
	lkc_store *store;
	lkc_err err;
	lkc_rc rc;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(ttl, ttl_null)
	ZEND_PARSE_PARAMETERS_END();

	if (!php_lock_ready(lock)) {
		RETURN_THROWS();
	}
	if (ttl_null) {
		ttl_ms = lock->ttl_ms;
	} else if (!php_lock_seconds_to_ms(ttl, 1, false, &ttl_ms)) {
		RETURN_THROWS();
	}
	store = php_lock_store_of(lock);
	lkc_err_clear(&err);
	if (lkc_hold_foreign(&lock->hold)) {
		lkc_abandon(store, &lock->hold);
		php_lock_track(lock);
	}
	/* On stores without expiry, the store's refresh checks that the hold is still ours. */
	php_lock_auto_pause(lock);
	rc = lkc_refresh(store, &lock->hold, ttl_ms, &err);
	php_lock_track(lock);
	/* The thread refreshes with the TTL of the last refresh. */
	php_lock_auto_follow(lock, ttl_ms, rc == LKC_OK);
	if (rc != LKC_OK) {
		php_lock_throw(rc, &err, &lock->hold);
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Lock, release)
{
	php_lock_obj *lock = THIS_LOCK();
	double delay = 0;
	int64_t delay_ms;
	lkc_store *store;
	lkc_err err;
	lkc_rc rc;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(delay)
	ZEND_PARSE_PARAMETERS_END();

	/* No delay (the usual release) needs no conversion. */
	delay_ms = 0;
	if (!php_lock_ready(lock) || (delay != 0 && !php_lock_seconds_to_ms(delay, 1, true, &delay_ms))) {
		RETURN_THROWS();
	}
	store = php_lock_store_of(lock);
	if (delay_ms > 0 && !(store->ops->caps & LKC_CAP_EXPIRY)) {
		zend_argument_value_error(1, "must be 0 on the %s store, whose holds do not expire", store->ops->name);
		RETURN_THROWS();
	}
	if (lkc_hold_foreign(&lock->hold)) {
		/* The parent's hold: a forked child never gives it up. */
		php_lock_drop(lock, false);
		return;
	}
	if (lock->hold.mode == LKC_MODE_NONE && !lock->hold.unsure) {
		return;
	}
	/* Not held, but a failed acquire may have taken it on the server: lkc_release gives that back. */
	lkc_err_clear(&err);
	php_lock_auto_pause(lock);
	rc = lkc_release(store, &lock->hold, delay_ms, &err);
	php_lock_track(lock);
	/* A release that did not reach the store leaves the hold ours: it is still refreshed. */
	php_lock_auto_follow(lock, lock->ttl_ms, false);
	if (rc != LKC_OK) {
		php_lock_throw(rc, &err, &lock->hold);
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Lock, isAcquired)
{
	php_lock_obj *lock = THIS_LOCK();
	lkc_err err;
	lkc_rc rc;

	ZEND_PARSE_PARAMETERS_NONE();

	if (!php_lock_ready(lock)) {
		RETURN_THROWS();
	}
	lkc_err_clear(&err);
	php_lock_auto_pause(lock);
	rc = lkc_check(php_lock_store_of(lock), &lock->hold, &err);
	if (rc == LKC_OK && lock->refresher != NULL) {
		/* Still ours, also when the thread gave up on a store that was away: it goes on refreshing. */
		lkc_auto_resume(lock->refresher, &lock->hold, lock->auto_ttl_ms, lock->auto_until_ns, false);
	}
	switch (rc) {
		case LKC_OK:
			RETURN_TRUE;
		case LKC_EXPIRED:
		case LKC_LOST:
			php_lock_auto_stop(lock);
			RETURN_FALSE;
		default:
			if (lock->refresher != NULL) {
				lkc_auto_resume(lock->refresher, &lock->hold, lock->auto_ttl_ms, lock->auto_until_ns, false);
			}
			php_lock_throw(rc, &err, &lock->hold);
			RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Lock, isExpired)
{
	php_lock_obj *lock = THIS_LOCK();

	ZEND_PARSE_PARAMETERS_NONE();

	if (!php_lock_ready(lock)) {
		RETURN_THROWS();
	}
	php_lock_auto_peek(lock);
	RETURN_BOOL(lock->hold.expires_ns != 0 && lkc_now_ns() >= lock->hold.expires_ns);
}

ZEND_METHOD(Lock_Lock, getRemainingLifetime)
{
	php_lock_obj *lock = THIS_LOCK();
	uint64_t now;

	ZEND_PARSE_PARAMETERS_NONE();

	if (!php_lock_ready(lock)) {
		RETURN_THROWS();
	}
	if (lock->hold.mode == LKC_MODE_NONE || lkc_hold_foreign(&lock->hold)) {
		RETURN_NULL();
	}
	php_lock_auto_peek(lock);
	if (lock->hold.expires_ns == 0) {
		RETURN_NULL();
	}
	now = lkc_now_ns();
	if (now >= lock->hold.expires_ns) {
		RETURN_DOUBLE(0.0);
	}
	RETURN_DOUBLE((double) (lock->hold.expires_ns - now) / 1e9);
}

ZEND_METHOD(Lock_Lock, getResource)
{
	php_lock_obj *lock = THIS_LOCK();

	ZEND_PARSE_PARAMETERS_NONE();

	if (!php_lock_ready(lock)) {
		RETURN_THROWS();
	}
	RETURN_STRINGL(lock->hold.resource, lock->hold.resource_len);
}

ZEND_METHOD(Lock_Lock, getOwner)
{
	php_lock_obj *lock = THIS_LOCK();

	ZEND_PARSE_PARAMETERS_NONE();

	if (!php_lock_ready(lock)) {
		RETURN_THROWS();
	}
	RETURN_STRINGL(lock->hold.owner, lock->hold.owner_len);
}

ZEND_METHOD(Lock_Lock, getTtl)
{
	php_lock_obj *lock = THIS_LOCK();

	ZEND_PARSE_PARAMETERS_NONE();

	if (!php_lock_ready(lock)) {
		RETURN_THROWS();
	}
	if (lock->ttl_ms == LKC_TTL_NONE) {
		RETURN_NULL();
	}
	RETURN_DOUBLE((double) lock->ttl_ms / 1000.0);
}

ZEND_METHOD(Lock_Lock, getFencingToken)
{
	php_lock_obj *lock = THIS_LOCK();
	int64_t fence;
	lkc_err err;
	lkc_rc rc;

	ZEND_PARSE_PARAMETERS_NONE();

	if (!php_lock_ready(lock)) {
		RETURN_THROWS();
	}
	if (lock->hold.mode != LKC_MODE_EXCLUSIVE || lkc_hold_foreign(&lock->hold)) {
		RETURN_NULL();
	}
	lkc_err_clear(&err);
	/* The cached token holds while the hold does: as the thread's refreshes say. */
	php_lock_auto_peek(lock);
	rc = lkc_fence(php_lock_store_of(lock), &lock->hold, &fence, &err);
	if (rc == LKC_ERR_UNSUPPORTED) {
		RETURN_NULL();
	}
	if (rc == LKC_EXPIRED || rc == LKC_LOST) {
		/* Asking found the hold gone (a restored token, a TTL run out): not held, so no token. */
		php_lock_auto_pause(lock);
		lkc_abandon(php_lock_store_of(lock), &lock->hold);
		php_lock_track(lock);
		RETURN_NULL();
	}
	if (rc != LKC_OK) {
		php_lock_throw(rc, &err, &lock->hold);
		RETURN_THROWS();
	}
	RETURN_LONG((zend_long) fence);
}

/*
 * A restored hold: the refreshing an earlier lock object of this process left
 * behind (autoRelease false) is this lock's now, going on with its settings or
 * stopped when it has none; else, with $autoRefresh, refreshing starts at once.
 */
static bool php_lock_auto_restore(php_lock_obj *lock)
{
	lkc_store *store = php_lock_store_of(lock);
	lkc_auto *left = lkc_auto_adopt(store, &lock->hold);
	lkc_err err;

	if (left != NULL && (lock->auto_ms == 0 || lock->ttl_ms == LKC_TTL_NONE)) {
		lkc_auto_stop(left);
		return true;
	}
	if (lock->auto_ms == 0 || lock->ttl_ms == LKC_TTL_NONE) {
		return true;
	}
	lock->auto_until_ns = lock->auto_ms > 0 ? lkc_now_ns() + (uint64_t) lock->auto_ms * 1000000u : 0;
	lock->auto_ttl_ms = lock->ttl_ms;
	if (left != NULL) {
		lock->refresher = left;
		lkc_auto_pause(left, &lock->hold);
		lkc_auto_resume(left, &lock->hold, lock->ttl_ms, lock->auto_until_ns, false);
		return true;
	}
	lkc_err_clear(&err);
	if (lkc_auto_start(store, &lock->hold, lock->ttl_ms, lkc_now_ns(), lock->auto_until_ns, &lock->refresher, &err)
		!= LKC_OK) {
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	return true;
}

bool php_lock_restore(php_lock_obj *lock, zend_string *owner, uint32_t arg_num)
{
	lkc_store *store = php_lock_store_of(lock);
	lkc_err err;

	if (!php_lock_owner_arg(owner, arg_num)) {
		return false;
	}
	if (store->ops->caps & LKC_CAP_PROCESS_BOUND) {
		if (php_lock_unpark(lock, owner)) {
			return true;
		}
		zend_throw_exception_ex(php_lock_ce_lock_exception, 0,
			"The %s store binds a hold to the process that took it: only a hold of this process whose lock object "
			"let go of it (autoRelease false) can be restored, and there is none of this owner",
			store->ops->name);
		return false;
	}
	lkc_err_clear(&err);
	if (lkc_hold_restore(&lock->hold, ZSTR_VAL(owner), ZSTR_LEN(owner), &err) != LKC_OK) {
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	php_lock_track(lock);
	return php_lock_auto_restore(lock);
}

void php_lock_setup_lock_class(void)
{
	php_lock_ce_lock->create_object = php_lock_create;
	memcpy(&php_lock_handlers, zend_get_std_object_handlers(), sizeof(zend_object_handlers));
	php_lock_handlers.offset = XtOffsetOf(php_lock_obj, std);
	php_lock_handlers.free_obj = php_lock_free;
	php_lock_handlers.clone_obj = NULL;
	php_lock_handlers.compare = zend_objects_not_comparable;
}
