from roofline.cli.entry import run

run()
