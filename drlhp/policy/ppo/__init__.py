"""PPO, the policy's algorithm for continuous (Box) actions and, with --algo ppo, for discrete ones.

Both: ``update`` (the update math: GAE, the clipped surrogate and value loss, each action kind's log-probability and
entropy, the hand-written Adam), ``batches`` (PPORollout, Episode, DiscreteRollout: what a rollout hands an update).
Box actions: ``policy`` (PPOPolicy), ``network`` (the 64-64 tanh actor and critic), ``numpy_policy`` (the forward
pass acting runs, and a checkpoint played by its mean, without TensorFlow), ``rollout`` (RolloutCollector on a
gymnasium vector env), ``trainer`` (PPOTrainer: the policy loop with them), ``box_actions`` (a Box-action env's
envs, rewards and segments for the labeller). Discrete actions: ``discrete_policy`` (DiscretePPOPolicy, on the
discrete algorithms' network, drlhp.policy.nets), ``discrete_rollout``, ``discrete_trainer``. One training loop for
every algorithm: PolicyTrainer.train (drlhp.policy.loop); where a run picks PPO: drlhp.policy.algorithms."""
