"""What a change does to the platform: everything `make diff` consults."""
