from arena.app.cli import main

main()
