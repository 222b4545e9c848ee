import JSONRPC
import MediaKit

/// Every method and notification of the API, as rpc-spec.json lists them. The shipped build
/// serves exactly these (the runtime's and its modules'; a test checks), and the document is
/// checked against their types (`APISpec.disagreements`).
public enum API {
    public static let methods: [any APIMethod.Type] = [
        RPCDiscover.self, HostInfo.self, HostDoctor.self,
        ProvidersList.self, ProvidersCategories.self,
        MediaBrowse.self, MediaSearch.self, MediaGet.self, MediaChildren.self, MediaChapters.self, MediaTranscript.self,
        TranscriptsSearch.self, MediaSegments.self,
        FavoritesAdd.self, FavoritesRemove.self, FavoritesList.self, FavoritesSync.self, FavoritesLatest.self,
        HistoryList.self, HistoryClear.self,
        DownloadsStart.self, DownloadsList.self, DownloadsPause.self, DownloadsResume.self, DownloadsCancel.self,
        DownloadsRemove.self,
        MediaArtwork.self, CacheStats.self, CacheClear.self,
        ListsList.self, ListsCreate.self, ListsRename.self, ListsDelete.self, ListsAdd.self, ListsRemove.self,
        ListsMove.self, ListsItems.self, ListsDownload.self, ListsExport.self, ListsImport.self,
        AuthStatus.self, AuthLogin.self, AuthLogout.self,
        ConfigGet.self, ConfigSet.self,
        QueueList.self, QueueAdd.self, QueueMove.self, QueueRemove.self, QueueClear.self,
        RefreshRun.self, NewList.self, NewSeen.self, RulesList.self, RulesSet.self, RulesUnset.self,
        PlayerOpen.self, PlayerStatusGet.self, PlayerPause.self, PlayerResume.self, PlayerSeek.self, PlayerStop.self,
        PlayerVolume.self, PlayerSpeed.self, PlayerNext.self, PlayerPrevious.self, PlayerSleep.self, PlayerChapter.self,
        PlayerMark.self,
        ShareStart.self, ShareStop.self, ShareStatus.self, ShareBrowse.self, ShareReceive.self,
        SyncLogin.self, SyncLogout.self, SyncStatus.self, SyncNow.self,
        WebStatus.self, WebPair.self, WebLink.self, WebDevices.self, WebRevoke.self,
    ]

    public static let notifications: [any HostNotification.Type] = [
        DownloadProgress.self, DownloadStateChange.self, AuthPrompt.self, LibraryChange.self, SearchResults.self,
        PlayerStatus.self, PlayerSkip.self,
    ]
}
