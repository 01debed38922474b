"""Select the CI tasks a pull request needs."""
