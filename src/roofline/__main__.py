from roofline.cli.app import run

run()
