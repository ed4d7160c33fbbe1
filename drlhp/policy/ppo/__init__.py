"""PPO, the policy's algorithm for continuous (Box) actions and, with --algo ppo, for discrete ones.

Box actions: ``network`` (the 64-64 tanh actor and critic), ``numpy_mlp`` (the forward pass acting runs, without
TensorFlow), ``update`` (PPOPolicy: GAE, the clipped surrogate, the hand-written Adam), ``batches`` (PPORollout,
Episode, DiscreteRollout: what a rollout hands an update), ``rollout`` (RolloutCollector on a gymnasium vector env),
``trainer`` (PPOTrainer: drlhp.policy.trainer's loop with them; EnvReward), ``prefs`` (a Box-action env's segments
for the labeller). Discrete actions: ``discrete`` (DiscretePPOPolicy, on A2C's network), ``discrete_rollout``,
``discrete_trainer``. One training loop for every algorithm: PolicyTrainer.train (drlhp.policy.trainer)."""
