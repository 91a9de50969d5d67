/* cli/cmd_cell.c: `airlock cell`. */
#include "airlock.h"
#include "cli.h"
#include "net.h"
#include "tool.h"
#include "util.h"
#include "compiler.h"
#include "fdio.h"
#include "limit.h"
#include "rules.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * `airlock cell SESSION [FILE|-]`: `airlock run --session SESSION --cell
 * FILE` (the code from standard input without FILE); `run --cell` takes
 * the run's options (limits; the runtime is the session's interpreter's).
 */
int
cli_cell(struct cli *cli, int argc, char **argv)
{
	char *run_argv[] = {"run", "--cell", "--session", NULL, NULL, NULL};
	int i;

	for (i = 1; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1] != '\0') {
			if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
				cli_usage_cmd(stdout, "cell");
				return CLI_EXIT_OK;
			}
			return cli_usage_error(
				"cell: options go to `airlock run --session ID --cell`");
		}
	if (argc < 2 || argc > 3)
		return cli_usage_error("cell: expected SESSION [FILE|-]");
	if (cli_check_session_id(argv[1]) != 0)
		return CLI_EXIT_USAGE;
	run_argv[3] = argv[1];
	run_argv[4] = argc == 3 ? argv[2] : "-";
	optind = 0;
	return cli_run(cli, 5, run_argv);
}
