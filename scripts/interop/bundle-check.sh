# bundle-check.sh, sourced by scripts/interop.sh (it uses that script's
# $node, $pkgdir, $work, $sock, record, indent and limit): the Claude Desktop
# bundle, checked with the pinned official MCPB CLI.
#
#   build     scripts/bundle.sh builds the binaries and packs them with `mcpb pack`
#   validate  `mcpb validate` on the staged manifest.json
#   unpack    `mcpb unpack` of the .mcpb into a fresh folder
#   then scripts/interop/bundle-check.mjs: the binaries, and two sessions with
#   the server started as the unpacked manifest says for this platform.

mcpb_cli="$pkgdir/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js"
mcpb_version="$("$node" -p 'require(process.argv[1]).version' "$pkgdir/node_modules/@anthropic-ai/mcpb/package.json")"
bundle_era="$("$node" -p 'process.platform + "-" + process.arch')"
bdir="$work/bundle"
mkdir -p "$bdir/home/.tairseach"
say "MCPB CLI $mcpb_version: the Claude Desktop bundle (scripts/bundle.sh, scripts/interop/bundle-check.mjs)"

# bundle_step OP LOG COMMAND...: record OP ok when COMMAND succeeds.
bundle_step() {
	local op="$1" log="$2"
	shift 2
	if limit 600 "$@" >"$log" 2>&1; then
		record bundle "$bundle_era" "$op" ok
	else
		record bundle "$bundle_era" "$op" FAIL "exit code $?"
		indent "$log"
		return 1
	fi
}

if bundle_step "build (mcpb pack)" "$bdir/build.log" \
	env MCPB_NODE="$node" MCPB_CLI="$mcpb_cli" "$root/scripts/bundle.sh" --stage "$bdir/stage" -o "$bdir/tairseach-mcp.mcpb" &&
	bundle_step "mcpb validate" "$bdir/validate.log" "$node" "$mcpb_cli" validate "$bdir/stage/manifest.json" &&
	bundle_step "mcpb unpack" "$bdir/unpack.log" "$node" "$mcpb_cli" unpack "$bdir/tairseach-mcp.mcpb" "$bdir/unpacked"; then
	# The defaults session's home: the manifests, and the backend's socket
	# where the bridge looks by default.
	cp -R "$root/manifests-example" "$bdir/home/.tairseach/manifests"
	ln -s "$sock" "$bdir/home/.tairseach/tairseach.sock"
	checks bundle "$bundle_era" "$node" "$pkgdir/bundle-check.mjs" --dir "$bdir/unpacked" --home "$bdir/home" \
		--manifests "$work/manifests" --socket "$sock"
fi
