"""A2C, the policy's algorithm for discrete actions (the paper's for Atari): ``policy`` (A2CPolicy: acting and the
compiled train step on the discrete algorithms' network, drlhp.policy.nets; ``build_policy``), ``update`` (the loss,
n-step returns, RMSprop), ``rollout`` (A2CRunner: the discrete algorithms' rollout loop with the n-step returns),
``trainer`` (A2CTrainer: the policy loop, drlhp.policy.loop, with them). drlhp.policy.algorithms is where a run picks
it."""
