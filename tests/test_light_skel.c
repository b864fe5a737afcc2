/*
 * test_light_skel.c: util/light_skel.c's side of a BPF load, without the
 * kernel: light_skel_load()'s tries (one without the verifier's log, one
 * with it after a failure that is not EPERM) and the reason it keeps, fed by
 * a fake try that fails as the kernel does and writes the log it would.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/light_skel.h"

/* what the fake kernel does at each try, and what it saw */
struct fake {
	int		err[2];		/* the errno of the first and second try (0: loaded) */
	const char	*log;		/* what it writes into a log it is given */
	int		tries;
	int		logged;		/* tries given a log */
};

static int fake_try(void *arg, char **log)
{
	struct fake *f = arg;
	struct bpf_loader_ctx ctx = { 0 };
	int err = f->err[f->tries < 2 ? f->tries : 1];

	f->tries++;
	if (log) {
		f->logged++;
		light_skel_log_on(&ctx, log);
		assert_non_null(*log);
		assert_int_equal(ctx.log_level, 1);
		assert_true(ctx.log_size > strlen(f->log));
		strcpy((char *)(unsigned long)ctx.log_buf, f->log);
	}
	return err;
}

static const char refused_log[] =
	"func#0 @0\n"
	"0: R1=ctx() R10=fp0\n"
	"; return ctx->args[2]; @ feed.bpf.c:120\n"
	"0: (79) r0 = *(u64 *)(r1 +16)\n"
	"func 'sched_process_exit' doesn't have 3-th argument\n"
	"invalid bpf_context access off=16 size=8\n"
	"processed 1 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 mark_read 0\n"
	"verification time 12 usec\n"
	"stack depth 0\n";

static void test_loads_first_time(void **state)
{
	struct fake f = { .err = { 0, 0 }, .log = refused_log };
	char said[160] = "stale";

	(void)state;
	assert_int_equal(light_skel_load(fake_try, &f, said, sizeof(said)), 0);
	assert_int_equal(f.tries, 1);
	assert_int_equal(f.logged, 0);	/* a load that succeeds costs the verifier no log */
	assert_string_equal(said, "");
}

static void test_no_privilege_is_not_tried_again(void **state)
{
	struct fake f = { .err = { EPERM, EPERM }, .log = refused_log };
	char said[160];

	(void)state;
	assert_int_equal(light_skel_load(fake_try, &f, said, sizeof(said)), EPERM);
	assert_int_equal(f.tries, 1);
	assert_string_equal(said, "");
}

static void test_verifier_says_why(void **state)
{
	struct fake f = { .err = { EACCES, EACCES }, .log = refused_log };
	char said[160];

	(void)state;
	assert_int_equal(light_skel_load(fake_try, &f, said, sizeof(said)), EACCES);
	assert_int_equal(f.tries, 2);
	assert_int_equal(f.logged, 1);
	/* the line before the statistics, not the statistics */
	assert_string_equal(said, "invalid bpf_context access off=16 size=8");
}

static void test_reason_cut_to_fit(void **state)
{
	struct fake f = { .err = { EINVAL, EINVAL }, .log = refused_log };
	char said[8];

	(void)state;
	assert_int_equal(light_skel_load(fake_try, &f, said, sizeof(said)), EINVAL);
	assert_string_equal(said, "invalid");
}

static void test_log_that_fails_the_load_says_nothing(void **state)
{
	/* a log too small fails the load with ENOSPC: what it holds is no reason for the first errno */
	struct fake f = { .err = { EACCES, ENOSPC }, .log = refused_log };
	char said[160];

	(void)state;
	assert_int_equal(light_skel_load(fake_try, &f, said, sizeof(said)), EACCES);
	assert_int_equal(f.tries, 2);
	assert_string_equal(said, "");
}

static void test_not_the_verifiers_refusal(void **state)
{
	/* a map the kernel could not make: the log is the last program's, statistics alone, and no reason */
	struct fake f = { .err = { ENOMEM, ENOMEM }, .log = refused_log };
	char said[160];

	(void)state;
	assert_int_equal(light_skel_load(fake_try, &f, said, sizeof(said)), ENOMEM);
	assert_int_equal(f.tries, 2);
	assert_string_equal(said, "");
}

static void test_statistics_alone_give_no_reason(void **state)
{
	struct fake f = { .err = { EINVAL, EINVAL },
			  .log = "processed 12 insns (limit 1000000) max_states_per_insn 0\nverification time 3 usec\n" };
	char said[160];

	(void)state;
	assert_int_equal(light_skel_load(fake_try, &f, said, sizeof(said)), EINVAL);
	assert_string_equal(said, "");
}

static void test_second_try_loads(void **state)
{
	/* a failure that passed (the kernel out of memory a moment): loaded, and nothing to say */
	struct fake f = { .err = { ENOMEM, 0 }, .log = refused_log };
	char said[160];

	(void)state;
	assert_int_equal(light_skel_load(fake_try, &f, said, sizeof(said)), 0);
	assert_int_equal(f.tries, 2);
	assert_string_equal(said, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_first_time),
		cmocka_unit_test(test_no_privilege_is_not_tried_again),
		cmocka_unit_test(test_verifier_says_why),
		cmocka_unit_test(test_reason_cut_to_fit),
		cmocka_unit_test(test_log_that_fails_the_load_says_nothing),
		cmocka_unit_test(test_not_the_verifiers_refusal),
		cmocka_unit_test(test_statistics_alone_give_no_reason),
		cmocka_unit_test(test_second_try_loads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
