"""A2C, the policy's algorithm for discrete actions (the paper's for Atari): ``update`` (A2CPolicy: acting, the train
step, n-step returns; ``build_policy``), ``rollout`` (A2CRunner: the discrete algorithms' rollout loop with the n-step
returns), ``trainer`` (A2CTrainer: the policy loop, drlhp.policy.loop, with them). Its network is both discrete
algorithms' (drlhp.policy.nets); drlhp.policy.algorithms is where a run picks it."""
