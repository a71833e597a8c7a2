//! `rltrain`: RL with verifiable rewards on math (see the workspace README).
