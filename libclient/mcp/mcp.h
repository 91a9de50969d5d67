/* mcp/mcp.h: `airlock mcp`, a Model Context Protocol server on stdio (docs/mcp.md). */
#ifndef AIRLOCK_MCP_H
#define AIRLOCK_MCP_H

/*
 * Serve MCP on stdin and stdout (newline-delimited JSON-RPC 2.0) until stdin
 * ends, running tools on the airlockd at socket_path (NULL: $AIRLOCK_SOCKET,
 * else the default). argc and argv are the subcommand's own ("mcp" first).
 * Returns the command's exit status.
 */
int mcp_main(const char *socket_path, int argc, char **argv);

#endif
