from ragrade.cli import main

main()
