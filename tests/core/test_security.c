/*
 * Security properties of the core: owner tokens are unique and fully random;
 * what the local stores create is owner-only by default and gets exactly the
 * wider mode asked for; no resource name leads the flock store outside its
 * directory or through a planted symbolic link. Everything created is removed.
 */
#define _GNU_SOURCE
#include "t.h"
#include "t_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <unistd.h>

/* How many owner tokens the uniqueness test draws. */
#define TOKEN_COUNT 1000000
/* Slots of the token hash set: a power of two, at most half full. */
#define TOKEN_SLOTS (1u << 21)

/* The caller defines semun (semctl(2)). */
union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

/* nftw callback: removes one entry. */
/* A fresh directory under /tmp, its path in buf. */
static void make_tmpdir(char buf[64])
{
	CHECK(t_make_tmpdir(buf, "security"));
}

/* The permission bits of path (without following a link), or -1. */
static int mode_of(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0) {
		return -1;
	}
	return (int) (st.st_mode & 07777);
}

/* The value of a lowercase hex digit, or -1 for anything else. */
static int hex_value(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	return -1;
}

/*
 * A million tokens are all LKC_TOKEN_LEN lowercase hex digits and all
 * different; and every one of the 32 digit positions takes each of the 16
 * values about equally often, so that no position is stuck or biased (a token
 * that used fewer random bits than its length would still be unique here).
 */
static void tokens_are_distinct_and_full_length(void)
{
	uint64_t *slots = calloc((size_t) TOKEN_SLOTS * 2, sizeof(uint64_t));
	unsigned char *used = calloc(TOKEN_SLOTS, 1);
	static unsigned counts[LKC_TOKEN_LEN][16];
	size_t duplicates = 0, malformed = 0, failures = 0;
	unsigned low = TOKEN_COUNT, high = 0;

	CHECK(slots != NULL && used != NULL);
	if (slots == NULL || used == NULL) {
		free(slots);
		free(used);
		return;
	}
	memset(counts, 0, sizeof(counts));
	for (size_t n = 0; n < TOKEN_COUNT; n++) {
		char token[LKC_TOKEN_LEN + 1];
		uint64_t hi = 0, lo = 0;
		lkc_err err;
		size_t slot;
		int bad = 0;

		memset(token, 'X', sizeof(token));
		lkc_err_clear(&err);
		if (lkc_token_new(token, &err) != LKC_OK) {
			failures++;
			continue;
		}
		if (token[LKC_TOKEN_LEN] != '\0' || strlen(token) != LKC_TOKEN_LEN) {
			malformed++;
			continue;
		}
		for (int i = 0; i < LKC_TOKEN_LEN; i++) {
			int v = hex_value(token[i]);

			if (v < 0) {
				bad = 1;
				break;
			}
			counts[i][v]++;
			if (i < 16) {
				hi = hi << 4 | (uint64_t) v;
			} else {
				lo = lo << 4 | (uint64_t) v;
			}
		}
		if (bad) {
			malformed++;
			continue;
		}
		/* Open addressing with linear probing; the low bits of random tokens are a fine hash. */
		for (slot = (size_t) (lo ^ hi) & (TOKEN_SLOTS - 1); used[slot]; slot = (slot + 1) & (TOKEN_SLOTS - 1)) {
			if (slots[2 * slot] == hi && slots[2 * slot + 1] == lo) {
				duplicates++;
				break;
			}
		}
		if (!used[slot]) {
			used[slot] = 1;
			slots[2 * slot] = hi;
			slots[2 * slot + 1] = lo;
		}
	}
	CHECK(failures == 0);
	CHECK(malformed == 0);
	CHECK(duplicates == 0);
	for (int i = 0; i < LKC_TOKEN_LEN; i++) {
		for (int v = 0; v < 16; v++) {
			low = counts[i][v] < low ? counts[i][v] : low;
			high = counts[i][v] > high ? counts[i][v] : high;
		}
	}
	/* 62500 expected per digit and position; the bounds lie about 10 standard deviations out. */
	if (low < 60000 || high > 65000) {
		fprintf(stderr, "token digit counts range from %u to %u, expected about 62500 each\n", low, high);
	}
	CHECK(low >= 60000);
	CHECK(high <= 65000);
	free(slots);
	free(used);
}

/* Opens a flock store on dir with mode, locks resource (and breaks that hold) and returns the lock file's path in path. */
static void flock_lock_file(const char *dir, int mode, const char *resource, char *path, size_t size)
{
	lkc_store *store = NULL;
	lkc_hold hold;
	lkc_err err;
	char *name;

	lkc_err_clear(&err);
	CHECK_RC(lkc_flock_open(&store, dir, mode, &err), LKC_OK, &err);
	if (store == NULL) {
		path[0] = '\0';
		return;
	}
	CHECK_RC(lkc_hold_init(&hold, resource, strlen(resource), &err), LKC_OK, &err);
	CHECK_RC(lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	/* force_release puts a new file at the name: it must get the same mode. */
	CHECK_RC(store->ops->force_release(store, resource, strlen(resource), &err), LKC_OK, &err);
	CHECK_RC(lkc_release(store, &hold, 0, &err), LKC_EXPIRED, &err);
	lkc_hold_dispose(&hold);
	store->ops->destroy(store);
	name = lkc_flock_file_name(resource, strlen(resource));
	CHECK(name != NULL);
	snprintf(path, size, "%s/%s", dir, name != NULL ? name : "");
	free(name);
}

/* Checks that a store made under umask mask with mode gives its files file_mode and its new directories dir_mode. */
static void check_flock_modes(mode_t mask, int mode, int file_mode, int dir_mode)
{
	char top[64], dir[128], parent[128], path[512];
	mode_t old = umask(mask);
	int got;

	make_tmpdir(top);
	/* Two missing levels: lkc_flock_open creates both. */
	snprintf(parent, sizeof(parent), "%s/a", top);
	snprintf(dir, sizeof(dir), "%s/a/b", top);
	flock_lock_file(dir, mode, "report", path, sizeof(path));
	umask(old);

	got = mode_of(path);
	if (got != file_mode) {
		fprintf(stderr, "umask %03o, mode %03o: lock file is %03o, want %03o\n",
			(unsigned) mask, (unsigned) mode, (unsigned) got, (unsigned) file_mode);
	}
	CHECK(got == file_mode);
	got = mode_of(dir);
	if (got != dir_mode) {
		fprintf(stderr, "umask %03o, mode %03o: directory is %03o, want %03o\n",
			(unsigned) mask, (unsigned) mode, (unsigned) got, (unsigned) dir_mode);
	}
	CHECK(got == dir_mode);
	got = mode_of(parent);
	if (got != dir_mode) {
		fprintf(stderr, "umask %03o, mode %03o: parent directory is %03o, want %03o\n",
			(unsigned) mask, (unsigned) mode, (unsigned) got, (unsigned) dir_mode);
	}
	CHECK(got == dir_mode);
	rm_rf(top);
}

/* The default mode the PHP layer passes, 0600, gives 0600 files and 0700 directories whatever the umask. */
static void flock_is_owner_only_by_default(void)
{
	check_flock_modes(0, 0600, 0600, 0700);
	check_flock_modes(022, 0600, 0600, 0700);
	check_flock_modes(077, 0600, 0600, 0700);
}

/* A wider mode gives exactly those permissions, the directories searchable wherever readable. */
static void flock_honours_wider_mode(void)
{
	check_flock_modes(0, 0660, 0660, 0770);
	check_flock_modes(0, 0644, 0644, 0755);
	check_flock_modes(0, 0666, 0666, 0777);
}

/*
 * The mode is "the permissions of what they create" (API.md), the way Symfony's
 * FlockStore chmods its files: a group sharing the locks needs 0660 files and
 * 0770 directories, and the usual umask 022 must not turn them into 0640 and
 * 0750, which that group could not open read-write.
 */
static void flock_wider_mode_survives_umask(void)
{
	check_flock_modes(022, 0660, 0660, 0770);
	check_flock_modes(027, 0666, 0666, 0777);
}

/* A symbolic link planted at a lock file's name is refused, and its target never created. */
static void flock_refuses_planted_link(void)
{
	char dir[64], victim[128], link[512];
	lkc_store *store = NULL;
	lkc_hold hold;
	lkc_err err;
	char *name = lkc_flock_file_name("planted", 7);

	make_tmpdir(dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link, sizeof(link), "%s/%s", dir, name != NULL ? name : "");
	CHECK(symlink(victim, link) == 0);
	lkc_err_clear(&err);
	CHECK_RC(lkc_flock_open(&store, dir, 0600, &err), LKC_OK, &err);
	if (store != NULL) {
		CHECK_RC(lkc_hold_init(&hold, "planted", 7, &err), LKC_OK, &err);
		lkc_err_clear(&err);
		CHECK_RC(lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_ERR_PERM, &err);
		CHECK(strstr(err.msg, "flock") != NULL);
		CHECK(access(victim, F_OK) != 0 && errno == ENOENT);
		lkc_hold_dispose(&hold);
		store->ops->destroy(store);
	}
	free(name);
	rm_rf(dir);
}

/* Whether dir holds exactly one entry, named only. */
static int only_entry(const char *dir, const char *only)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int count = 0, found = 0;

	if (d == NULL) {
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		count++;
		found |= strcmp(e->d_name, only) == 0;
	}
	closedir(d);
	return count == 1 && found;
}

/* Whether every entry of dir is a regular file whose name does not start with '.'. */
static int only_lock_files(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ok = 1;

	*count = 0;
	if (d == NULL) {
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		char path[1024];
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		(*count)++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		ok &= e->d_name[0] != '.' && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
	}
	closedir(d);
	return ok;
}

/* Resource names that look like paths create lock files in the store's directory and nowhere else. */
static void flock_names_stay_in_directory(void)
{
	static const char *const names[] = {
		"..", ".", "../escape", "../../../../tmp/escape", "/etc/passwd", "a/../../b", ".hidden",
		"..\\..\\win", "-", "\n", "store/..",
	};
	char top[64], dir[128];
	lkc_store *store = NULL;
	lkc_err err;
	int count = 0;

	make_tmpdir(top);
	snprintf(dir, sizeof(dir), "%s/store", top);
	lkc_err_clear(&err);
	CHECK_RC(lkc_flock_open(&store, dir, 0600, &err), LKC_OK, &err);
	if (store == NULL) {
		rm_rf(top);
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		lkc_hold hold;
		int locked = 0;

		CHECK_RC(lkc_hold_init(&hold, names[i], strlen(names[i]), &err), LKC_OK, &err);
		CHECK_RC(lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
		CHECK_RC(store->ops->is_locked(store, names[i], strlen(names[i]), &locked, &err), LKC_OK, &err);
		CHECK(locked == 1);
		CHECK_RC(lkc_release(store, &hold, 0, &err), LKC_OK, &err);
		CHECK_RC(store->ops->force_release(store, names[i], strlen(names[i]), &err), LKC_OK, &err);
		lkc_hold_dispose(&hold);
	}
	store->ops->destroy(store);
	CHECK(only_entry(top, "store"));
	CHECK(only_lock_files(dir, &count));
	CHECK(count == (int) (sizeof(names) / sizeof(names[0])));
	rm_rf(top);
}

/* A resource name no other test or run uses: semaphore keys are system-wide. */
static void unique_resource(char *buf, size_t size, const char *hint)
{
	char token[LKC_TOKEN_LEN + 1];
	lkc_err err;

	lkc_err_clear(&err);
	CHECK_RC(lkc_token_new(token, &err), LKC_OK, &err);
	snprintf(buf, size, "security-%s-%s", hint, token);
}

/* Checks that a semaphore store opened with mode creates its sets with exactly that mode, then removes them. */
static void check_sem_mode(int mode, mode_t mask)
{
	char resource[96];
	lkc_store *store = NULL;
	lkc_hold hold;
	lkc_err err;
	struct semid_ds ds;
	union semun arg;
	mode_t old;
	int32_t key;
	int id;

	unique_resource(resource, sizeof(resource), "sem");
	key = lkc_sem_key(resource, strlen(resource));
	lkc_err_clear(&err);
	CHECK_RC(lkc_sem_open(&store, mode, &err), LKC_OK, &err);
	if (store == NULL) {
		return;
	}
	CHECK_RC(lkc_hold_init(&hold, resource, strlen(resource), &err), LKC_OK, &err);
	old = umask(mask);
	CHECK_RC(lkc_acquire(store, &hold, LKC_MODE_EXCLUSIVE, LKC_TTL_NONE, 0, &err), LKC_OK, &err);
	umask(old);
	id = semget((key_t) key, 0, 0);
	CHECK(id >= 0);
	if (id >= 0) {
		memset(&ds, 0, sizeof(ds));
		arg.buf = &ds;
		CHECK(semctl(id, 0, IPC_STAT, arg) == 0);
		if ((int) (ds.sem_perm.mode & 0777) != mode) {
			fprintf(stderr, "semaphore set made with mode %03o is %03o\n", (unsigned) mode,
				(unsigned) (ds.sem_perm.mode & 0777));
		}
		CHECK((int) (ds.sem_perm.mode & 0777) == mode);
		CHECK(ds.sem_perm.uid == geteuid() && ds.sem_perm.cuid == geteuid());
	}
	CHECK_RC(lkc_release(store, &hold, 0, &err), LKC_OK, &err);
	/* Remove what we made, and make sure it is gone. */
	CHECK_RC(store->ops->force_release(store, resource, strlen(resource), &err), LKC_OK, &err);
	CHECK(semget((key_t) key, 0, 0) < 0 && errno == ENOENT);
	lkc_hold_dispose(&hold);
	store->ops->destroy(store);
}

/* Sets are 0600 with the default mode, whatever the umask. */
static void sem_is_owner_only_by_default(void)
{
	check_sem_mode(0600, 0);
	check_sem_mode(0600, 022);
}

/* A wider mode is given exactly. */
static void sem_honours_wider_mode(void)
{
	check_sem_mode(0660, 022);
	check_sem_mode(0640, 077);
	check_sem_mode(0666, 022);
}

TEST_MAIN(T(tokens_are_distinct_and_full_length), T(flock_is_owner_only_by_default), T(flock_honours_wider_mode),
	T(flock_wider_mode_survives_umask), T(flock_refuses_planted_link), T(flock_names_stay_in_directory),
	T(sem_is_owner_only_by_default), T(sem_honours_wider_mode))
