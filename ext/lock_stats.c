/* Lock\stats() and the counters' rows of phpinfo(): the core's per-kind counters (lkc_stats_of) by store class. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php_lock.h"

#include "ext/standard/info.h"

/* The store class of each kind of core store; NULL for a store not built. */
static zend_class_entry *php_lock_stats_class(lkc_kind kind)
{
	switch (kind) {
		case LKC_KIND_FLOCK:
			return php_lock_ce_flock_store;
		case LKC_KIND_SEM:
			return php_lock_ce_semaphore_store;
		case LKC_KIND_REDIS:
			return php_lock_ce_redis_store;
		case LKC_KIND_COMBINED:
			return php_lock_ce_combined_store;
		case LKC_KIND_PGSQL:
			return php_lock_ce_postgres_store;
		case LKC_KIND_MYSQL:
			return php_lock_ce_mysql_store;
		/* --- MemcachedStore --- */
		case LKC_KIND_MEMCACHED:
			return php_lock_ce_memcached_store;
		/* --- end MemcachedStore --- */
		default:
			return NULL;
	}
}

/* The counters of every kind added up. */
static void php_lock_stats_total(lkc_stats *total)
{
	memset(total, 0, sizeof(*total));
	for (int k = 0; k < LKC_KINDS; k++) {
		for (int i = 0; i < LKC_STATS; i++) {
			/* The auto-refresh thread adds to its counter meanwhile. */
			total->n[i] += __atomic_load_n(&lkc_stats_of[k].n[i], __ATOMIC_RELAXED);
		}
		total->wait_ns += lkc_stats_of[k].wait_ns;
	}
}

/* One entry of Lock\stats(): the counters by name, then wait_seconds. */
static void php_lock_stats_entry(zval *entry, const lkc_stats *st)
{
	array_init_size(entry, LKC_STATS + 1);
	for (int i = 0; i < LKC_STATS; i++) {
		add_assoc_long(entry, lkc_stat_names[i], (zend_long) __atomic_load_n(&st->n[i], __ATOMIC_RELAXED));
	}
	add_assoc_double(entry, "wait_seconds", (double) st->wait_ns / 1e9);
}

ZEND_FUNCTION(Lock_stats)
{
	lkc_stats total;
	zval entry;

	ZEND_PARSE_PARAMETERS_NONE();

	array_init(return_value);
	php_lock_stats_total(&total);
	php_lock_stats_entry(&entry, &total);
	add_assoc_zval(return_value, "total", &entry);
	for (int k = 0; k < LKC_KINDS; k++) {
		zend_class_entry *ce = php_lock_stats_class((lkc_kind) k);

		if (ce != NULL && lkc_stats_of[k].used) {
			php_lock_stats_entry(&entry, &lkc_stats_of[k]);
			zend_hash_update(Z_ARRVAL_P(return_value), ce->name, &entry);
		}
	}
}

void php_lock_stats_info(void)
{
	lkc_stats total;
	char text[32];

	php_lock_stats_total(&total);
	php_info_print_table_start();
	php_info_print_table_colspan_header(2, "Counters of this process (Lock\\stats())");
	for (int i = 0; i < LKC_STATS; i++) {
		snprintf(text, sizeof(text), "%llu", (unsigned long long) total.n[i]);
		php_info_print_table_row(2, lkc_stat_names[i], text);
	}
	snprintf(text, sizeof(text), "%.3f", (double) total.wait_ns / 1e9);
	php_info_print_table_row(2, "wait_seconds", text);
	php_info_print_table_end();
}
