"""What codeloop does with each key of Claude Code's settings reference.

Every key is either honoured or named at start as not supported: with --verbose when ignoring
it changes nothing that matters for safety (interface looks, Claude.ai account features), and
always when ignoring it would leave the user less protected than their file asks for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from codeloop.system.valueclass import valueclass

Support = Literal["honoured", "ignored", "unsafe"]


@valueclass
class KeyInfo:
    support: Support
    why: str = ""


def _group(support: Support, why: str, names: str) -> dict[str, KeyInfo]:
    return {name: KeyInfo(support, why) for name in names.split()}


_UI = "codeloop's terminal UI has no such option"
_ACCOUNT = "Claude.ai account, desktop and remote features do not exist in codeloop"
_TEAMS = "codeloop has no workflows, agent teams or worktrees"
_AUTH = "codeloop reads API keys from the environment (or apiKeyHelper)"
_MODELS = "codeloop has no such model options"
_NA = "not applicable to codeloop"

KEYS: dict[str, KeyInfo] = {
    **_group(
        "honoured",
        "",
        "$schema model env permissions hooks sandbox disableAllHooks allowManagedHooksOnly "
        "allowManagedPermissionRulesOnly apiKeyHelper cleanupPeriodDays includeCoAuthoredBy "
        "attribution autoCompactEnabled fallbackModel disableAutoMode disableBypassPermissionsMode "
        "autoMode allowedHttpHookUrls "
        "httpHookAllowedEnvVars checkpoints claudeMdExcludes claudeMd enabledPlugins "
        "extraKnownMarketplaces additionalMarketplaces outputStyle disableSkillShellExecution "
        "skillOverrides blockedMarketplaces strictKnownMarketplaces allowedMarketplaces agent "
        "effortLevel alwaysThinkingEnabled requestOverrides webSearch compactProfile "
        "autoMemoryEnabled autoMemoryDirectory maxTurns "
        "enableAllProjectMcpServers enabledMcpjsonServers disabledMcpjsonServers "
        "statusLine editorMode "
        "allowedMcpServers deniedMcpServers allowManagedMcpServersOnly",
    ),
    **_group(
        "ignored",
        _UI,
        "askUserQuestionTimeout autoScrollEnabled axScreenReader companyAnnouncements "
        "defaultShell dialogExpiry diffTool emojiCompletionEnabled fileSuggestion "
        "footerLinksRegexes keybindingFlavor prefersReducedMotion promptSuggestionEnabled "
        "respectGitignore respondToBashCommands showClearContextOnPlanAccept showTurnDuration "
        "spellcheck spinnerTipsEnabled spinnerTipsOverride spinnerVerbs "
        "subagentStatusLine syntaxHighlightingDisabled terminalProgressBarEnabled "
        "terminalTitleFromRename theme tui verbose viewMode vimInsertModeRemaps voice "
        "voiceEnabled wheelScrollAccelerationEnabled autoConnectIde autoInstallIdeExtension "
        "externalEditorContext permissionExplainerEnabled skipDangerousModePermissionPrompt "
        "skipAutoPermissionPrompt showThinkingSummaries language preferredNotifChannel "
        "feedbackSurveyRate awaySummaryEnabled",
    ),
    **_group(
        "ignored",
        _ACCOUNT,
        "agentPushNotifEnabled allowAllClaudeAiMcps allowedChannelPlugins channelsEnabled "
        "crossSessionInbound disableAgentView disableArtifact disableClaudeAiConnectors "
        "disableDeepLinkRegistration disableRemoteControl enableArtifact "
        "inputNeededNotifEnabled isolatePeerMachines remote remoteControlAtStartup sshConfigs "
        "sshHostAllowlist syncClaudeAiSkills browserExternalPageTools "
        "disableBrowserExternalNavigation disableMobileSimulatorTools forceRemoteSettingsRefresh "
        "pluginSuggestionMarketplaces pluginTrustMessage autoUpdatesChannel minimumVersion "
        "requiredMaximumVersion requiredMinimumVersion wslInheritsWindowsSettings "
        "parentSettingsBehavior skipWebFetchPreflight otelHeadersHelper",
    ),
    **_group(
        "ignored",
        _TEAMS,
        "disableWorkflows enableWorkflows workflowKeywordTriggerEnabled workflowSizeGuideline "
        "teammateMode teammateDefaultModel worktree processWrapper plansDirectory ultracode",
    ),
    **_group(
        "ignored",
        _AUTH,
        "awsAuthRefresh awsCredentialExport forceLoginGatewayUrl forceLoginMethod "
        "forceLoginOrgUUID gcpAuthRefresh",
    ),
    **_group(
        "ignored",
        _MODELS,
        "advisorModel fastMode fastModePerSessionOptIn "
        "modelOverrides switchModelsOnFlag "
        "autoCompactWindow skillListingBudgetFraction skillListingMaxDescChars "
        "fileCheckpointingEnabled includeGitInstructions prUrlTemplate pluginConfigs "
        "disableBundledSkills useAutoModeDuringPlan",
    ),
    **_group(
        "unsafe",
        "an organization's restriction that codeloop cannot enforce",
        "availableModels enforceAvailableModels strictPluginOnlyCustomization "
        "disableSideloadFlags policyHelper",
    ),
}

# Sub-keys of objects whose parts are honoured one by one.
SANDBOX_KEYS: dict[str, KeyInfo] = {
    **_group("honoured", "", "enabled failIfUnavailable allowNetwork"),
    **_group(
        "ignored",
        "codeloop's sandbox is stricter without it",
        "autoAllowBashIfSandboxed excludedCommands allowUnsandboxedCommands "
        "enableWeakerNestedSandbox enableWeakerNetworkIsolation ignoreViolations "
        "allowAppleEvents ripgrep bwrapPath socatPath network",
    ),
    **_group(
        "unsafe",
        "codeloop's sandbox cannot hide these from commands",
        "filesystem credentials",
    ),
}
PERMISSION_KEYS: frozenset[str] = frozenset(
    {
        "allow",
        "deny",
        "ask",
        "defaultMode",
        "additionalDirectories",
        "disableBypassPermissionsMode",
        "disableAutoMode",
    }
)


@valueclass
class Unsupported:
    key: str
    why: str
    unsafe: bool
    sources: tuple[str, ...]


def unsupported_keys(found: Iterable[tuple[str, Mapping[str, Any]]]) -> list[Unsupported]:
    """The keys of each (source, settings object) that codeloop does not honour, in the order
    first seen, each with every source that set it."""
    seen: dict[str, tuple[KeyInfo, list[str]]] = {}

    def note(key: str, info: KeyInfo, source: str) -> None:
        entry = seen.setdefault(key, (info, []))
        if source not in entry[1]:
            entry[1].append(source)

    for source, data in found:
        for key, value in data.items():
            info = KEYS.get(key) or KeyInfo("ignored", "not a Claude Code setting")
            if info.support != "honoured":
                note(key, info, source)
            elif key == "sandbox" and isinstance(value, dict):
                for sub in value:
                    sub_info = SANDBOX_KEYS.get(sub) or KeyInfo("ignored", "not a sandbox setting")
                    if sub_info.support != "honoured":
                        note(f"sandbox.{sub}", sub_info, source)
    return [
        Unsupported(key, info.why, info.support == "unsafe", tuple(sources))
        for key, (info, sources) in seen.items()
    ]
