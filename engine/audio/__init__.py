"""Audio before it reaches a model: voice activity (Silero), the speech gate with its pre-roll, noise level."""
