from roofline.cli.app import main

raise SystemExit(main())
