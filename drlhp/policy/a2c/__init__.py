"""A2C, the policy's algorithm for discrete actions (the paper's for Atari): ``network`` (the Nature CNN, an MLP on
vectors; discrete PPO's too), ``update`` (A2CPolicy: acting, the train step, n-step returns; ``build_policy``),
``rollout`` (RolloutRunner: n_steps on the vector env, the reward source's rewards in one batch). The loop that
runs them is drlhp.policy.trainer's."""
