from drlhp.policy_trainer import env_seed


def test_env_seed_is_the_run_seed_then_new_31_bit_seeds_on_resume():
    assert env_seed(7, 0, 16) == 7
    resumed = [env_seed(7, u, 16) for u in (1, 25_000, 10**7)]
    assert len(set(resumed)) == 3 and 7 not in resumed
    assert all(0 <= s < 2**31 - 16 for s in resumed), "ale-py takes C ints; worker i adds i"
    assert env_seed(7, 25_000, 16) == env_seed(7, 25_000, 16)
