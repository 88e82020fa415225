from ragrade.cli import program

program()
