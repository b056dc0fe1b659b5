from goldset.cli import main

main()
