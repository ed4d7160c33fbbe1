"""drlhp: Deep Reinforcement Learning from Human Preferences (Christiano et al., 2017)."""
