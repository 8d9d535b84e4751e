"""SB3 DQN vs DelightDQN vs BootstrappedDQN on MountainCar-v0, a sparse-reward task where
exploration matters (−1 per step until the car reaches the flag; 200-step episodes).

The same comparison as ``examples/cartpole_delight.py`` (agents, evaluation, printed table),
with RL-Zoo's tuned DQN settings for MountainCar-v0 (``hyperparams/dqn.yml``: lr 4e-3,
batch 128, buffer 10 000, learning starts 1000, γ 0.98, target update every 600 steps, train
every 16 steps with 8 gradient steps, ε 1 → 0.07 over 20% of training, ``net_arch
[256, 256]``, 1.2e5 steps). A return of −200 means the flag was never reached.

Run: ``python examples/mountain_car_delight.py [--steps N] [--seeds S] [--smoke]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cartpole_delight import main

if __name__ == "__main__":
    main(default_env="MountainCar-v0")
