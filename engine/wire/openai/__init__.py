"""The OpenAI Realtime API's transcription dialect: event models and the server's protocol core."""
