import DiscfgCore

extension StoreConformance {
    /// Every check of the suite the store's capabilities allow, named as
    /// `Checks.method(argument: value)`, ready to run.
    public var checks: [Check] {
        var all: [Check] = []
        all.append(Check(name: "AttributionChecks.everyKindOfChangeRecordsWhoAndWhy()") { try await self.attribution.everyKindOfChangeRecordsWhoAndWhy() })
        all.append(Check(name: "AttributionChecks.aChangeWithoutAMessageRecordsWhoAlone()") { try await self.attribution.aChangeWithoutAMessageRecordsWhoAlone() })
        all.append(Check(name: "AttributionChecks.changesWithoutAttributionReadAsUnknown()") { try await self.attribution.changesWithoutAttributionReadAsUnknown() })
        all.append(Check(name: "AttributionChecks.anOversizedMessageIsRefusedAndChangesNothing()") { try await self.attribution.anOversizedMessageIsRefusedAndChangesNothing() })
        all.append(Check(name: "AttributionChecks.aTransactionNamesItsOwnAttribution()") { try await self.attribution.aTransactionNamesItsOwnAttribution() })
        all.append(Check(name: "AttributionChecks.anExpiryIsRecordedAsDiscfgsOwn()") { try await self.attribution.anExpiryIsRecordedAsDiscfgsOwn() })
        all.append(Check(name: "ConcurrencyChecks.concurrentIncrementsLoseNoUpdate()") { try await self.concurrency.concurrentIncrementsLoseNoUpdate() })
        for argument in ConditionChecks.setHappensWhenConditionsHoldArguments {
            all.append(Check(name: "ConditionChecks.setHappensWhenConditionsHold(condition: \(argument))") { try await self.condition.setHappensWhenConditionsHold(condition: argument) })
        }
        for argument in ConditionChecks.failedSetReturnsTheCurrentItemAndChangesNothingArguments {
            all.append(Check(name: "ConditionChecks.failedSetReturnsTheCurrentItemAndChangesNothing(condition: \(argument))") { try await self.condition.failedSetReturnsTheCurrentItemAndChangesNothing(condition: argument) })
        }
        for argument in ConditionChecks.failedSetOnAnAbsentKeyCarriesNoItemArguments {
            all.append(Check(name: "ConditionChecks.failedSetOnAnAbsentKeyCarriesNoItem(condition: \(argument))") { try await self.condition.failedSetOnAnAbsentKeyCarriesNoItem(condition: argument) })
        }
        all.append(Check(name: "ConditionChecks.versionZeroCreatesOnlyWhenAbsent()") { try await self.condition.versionZeroCreatesOnlyWhenAbsent() })
        for argument in ConditionChecks.deleteHappensWhenConditionsHoldArguments {
            all.append(Check(name: "ConditionChecks.deleteHappensWhenConditionsHold(condition: \(argument))") { try await self.condition.deleteHappensWhenConditionsHold(condition: argument) })
        }
        for argument in ConditionChecks.failedDeleteReturnsTheCurrentItemAndChangesNothingArguments {
            all.append(Check(name: "ConditionChecks.failedDeleteReturnsTheCurrentItemAndChangesNothing(condition: \(argument))") { try await self.condition.failedDeleteReturnsTheCurrentItemAndChangesNothing(condition: argument) })
        }
        for argument in ConditionChecks.failedDeleteOnAnAbsentKeyIsAConditionFailureArguments {
            all.append(Check(name: "ConditionChecks.failedDeleteOnAnAbsentKeyIsAConditionFailure(condition: \(argument))") { try await self.condition.failedDeleteOnAnAbsentKeyIsAConditionFailure(condition: argument) })
        }
        all.append(Check(name: "ConditionChecks.deleteOfAnAbsentKeyWhoseConditionsHoldIsKeyNotFound()") { try await self.condition.deleteOfAnAbsentKeyWhoseConditionsHoldIsKeyNotFound() })
        all.append(Check(name: "TransactionChecks.successRunsWhenEveryComparisonHoldsAndMakesOneRevision()") { try await self.transaction.successRunsWhenEveryComparisonHoldsAndMakesOneRevision() })
        all.append(Check(name: "TransactionChecks.failureRunsWhenAComparisonFailsAndReadsChangeNothing()") { try await self.transaction.failureRunsWhenAComparisonFailsAndReadsChangeNothing() })
        all.append(Check(name: "TransactionChecks.comparisonsFollowEtcdsRules()") { try await self.transaction.comparisonsFollowEtcdsRules() })
        all.append(Check(name: "TransactionChecks.deletesAndReadsOfPrefixesSeeTheBranchInOrder()") { try await self.transaction.deletesAndReadsOfPrefixesSeeTheBranchInOrder() })
        all.append(Check(name: "TransactionChecks.rangesCompareReadAndDeleteExactlyTheirKeys()") { try await self.transaction.rangesCompareReadAndDeleteExactlyTheirKeys() })
        all.append(Check(name: "TransactionChecks.aTransactionThatChangesNothingKeepsTheRevision()") { try await self.transaction.aTransactionThatChangesNothingKeepsTheRevision() })
        all.append(Check(name: "TransactionChecks.watchersAndEventPagesGetATransactionWhole()") { try await self.transaction.watchersAndEventPagesGetATransactionWhole() })
        all.append(Check(name: "TransactionChecks.pastReadsSeeATransactionAsOneStep()") { try await self.transaction.pastReadsSeeATransactionAsOneStep() })
        all.append(Check(name: "TransactionChecks.keepLastNDropsWholeTransactions()") { try await self.transaction.keepLastNDropsWholeTransactions() })
        all.append(Check(name: "TransactionChecks.invalidTransactionsChangeNothing()") { try await self.transaction.invalidTransactionsChangeNothing() })
        all.append(Check(name: "TransactionChecks.concurrentTransactionsLoseNothing()") { try await self.transaction.concurrentTransactionsLoseNothing() })
        if capabilities.contains(.nestedTransactions) {
            all.append(Check(name: "NestedTransactionChecks.comparisonsSeeTheConfigAsItBeganAndChangesShareOneRevision()") {
                try await self.nestedTransaction.comparisonsSeeTheConfigAsItBeganAndChangesShareOneRevision()
            })
            all.append(Check(name: "NestedTransactionChecks.aTreeThatOnlyReadsKeepsTheRevision()") { try await self.nestedTransaction.aTreeThatOnlyReadsKeepsTheRevision() })
            all.append(Check(name: "NestedTransactionChecks.aTreeThatBreaksARuleAnywhereChangesNothing()") { try await self.nestedTransaction.aTreeThatBreaksARuleAnywhereChangesNothing() })
        }
        all.append(Check(name: "ConfigLifecycleChecks.createStartsAtRevisionZeroAndKeepsSettings()") { try await self.configLifecycle.createStartsAtRevisionZeroAndKeepsSettings() })
        all.append(Check(name: "ConfigLifecycleChecks.createTwiceFailsWithConfigExists()") { try await self.configLifecycle.createTwiceFailsWithConfigExists() })
        all.append(Check(name: "ConfigLifecycleChecks.listConfigsIsSortedByName()") { try await self.configLifecycle.listConfigsIsSortedByName() })
        all.append(Check(name: "ConfigLifecycleChecks.updatePatchesOnlyTheGivenSettings()") { try await self.configLifecycle.updatePatchesOnlyTheGivenSettings() })
        all.append(Check(name: "ConfigLifecycleChecks.notificationTargetsAreKeptReplacedAndCleared()") { try await self.configLifecycle.notificationTargetsAreKeptReplacedAndCleared() })
        all.append(Check(name: "ConfigLifecycleChecks.encryptionSettingsAreKeptAndReplacedWhole()") { try await self.configLifecycle.encryptionSettingsAreKeptAndReplacedWhole() })
        all.append(Check(name: "ConfigLifecycleChecks.deleteRemovesTheConfigAndEverythingInIt()") { try await self.configLifecycle.deleteRemovesTheConfigAndEverythingInIt() })
        all.append(Check(name: "ConfigLifecycleChecks.keyCountFollowsEveryKindOfChange()") { try await self.configLifecycle.keyCountFollowsEveryKindOfChange() })
        all.append(Check(name: "ConfigLifecycleChecks.missingKeyInExistingConfigReadsAsNil()") { try await self.configLifecycle.missingKeyInExistingConfigReadsAsNil() })
        all.append(Check(name: "ConfigLifecycleChecks.everyOperationOnAnUnknownConfigThrowsConfigNotFound()") { try await self.configLifecycle.everyOperationOnAnUnknownConfigThrowsConfigNotFound() })
        all.append(Check(name: "ExportPagesChecks.keysChangedCreatedAndDeletedBetweenPagesKeepTheExportAtItsRevision()") { try await self.exportPages.keysChangedCreatedAndDeletedBetweenPagesKeepTheExportAtItsRevision() })
        all.append(Check(name: "ExportPagesChecks.pagesHoldTheItemsInKeyOrderWithinTheBudget()") { try await self.exportPages.pagesHoldTheItemsInKeyOrderWithinTheBudget() })
        if capabilities.contains(.exportPagesReadHistory) {
            all.append(Check(name: "ExportPagesChecks.anExportWhoseHistoryIsCompactedMeanwhileFailsWithCompacted()") { try await self.exportPages.anExportWhoseHistoryIsCompactedMeanwhileFailsWithCompacted() })
        }
        all.append(Check(name: "ExportPagesChecks.anExportAtAPastRevisionIsTheConfigAsItWasThen()") { try await self.exportPages.anExportAtAPastRevisionIsTheConfigAsItWasThen() })
        all.append(Check(name: "ExportPagesChecks.anUnknownConfigIsReportedBeforeAnyPage()") { try await self.exportPages.anUnknownConfigIsReportedBeforeAnyPage() })
        all.append(Check(name: "HistoryChecks.compactDropsHistoryThroughARevision()") { try await self.history.compactDropsHistoryThroughARevision() })
        all.append(Check(name: "HistoryChecks.historyIsNewestFirstAndOnlyForTheKey()") { try await self.history.historyIsNewestFirstAndOnlyForTheKey() })
        for argument in HistoryChecks.historyPaginatesWithNextBeforeArguments {
            all.append(Check(name: "HistoryChecks.historyPaginatesWithNextBefore(limit: \(argument))") { try await self.history.historyPaginatesWithNextBefore(limit: argument) })
        }
        all.append(Check(name: "HistoryChecks.historyRejectsBadLimits()") { try await self.history.historyRejectsBadLimits() })
        all.append(Check(name: "HistoryChecks.getAtEveryPastRevisionReturnsTheValueThen()") { try await self.history.getAtEveryPastRevisionReturnsTheValueThen() })
        all.append(Check(name: "HistoryChecks.getAtAFutureRevisionIsInvalid()") { try await self.history.getAtAFutureRevisionIsInvalid() })
        all.append(Check(name: "HistoryChecks.keepLastNCompactsOlderHistory()") { try await self.history.keepLastNCompactsOlderHistory() })
        all.append(Check(name: "HistoryChecks.updatingRetentionCompactsAtOnce()") { try await self.history.updatingRetentionCompactsAtOnce() })
        all.append(Check(name: "HistoryChecks.keepDaysCompactsAsTheClockMoves()") { try await self.history.keepDaysCompactsAsTheClockMoves() })
        all.append(Check(name: "HistoryChecks.pastReadsAndHistoryFollowManyChanges()") { try await self.history.pastReadsAndHistoryFollowManyChanges() })
        all.append(Check(name: "ImportExportChecks.exportHoldsEveryLiveItemInKeyOrder()") { try await self.importExport.exportHoldsEveryLiveItemInKeyOrder() })
        all.append(Check(name: "ImportExportChecks.importIntoAnotherConfigReproducesTheLiveItems()") { try await self.importExport.importIntoAnotherConfigReproducesTheLiveItems() })
        all.append(Check(name: "ImportExportChecks.reimportingTheSameSnapshotChangesNothing()") { try await self.importExport.reimportingTheSameSnapshotChangesNothing() })
        all.append(Check(name: "ImportExportChecks.importChangesOnlyWhatDiffers()") { try await self.importExport.importChangesOnlyWhatDiffers() })
        all.append(Check(name: "ImportExportChecks.replaceDeletesKeysNotInTheSnapshot()") { try await self.importExport.replaceDeletesKeysNotInTheSnapshot() })
        all.append(Check(name: "ImportExportChecks.importWithADuplicateKeyChangesNothing()") { try await self.importExport.importWithADuplicateKeyChangesNothing() })
        all.append(Check(name: "ImportExportChecks.importWithAnOversizedValueChangesNothing()") { try await self.importExport.importWithAnOversizedValueChangesNothing() })
        all.append(Check(name: "ImportExportChecks.importSkipsEntriesThatHaveAlreadyExpired()") { try await self.importExport.importSkipsEntriesThatHaveAlreadyExpired() })
        all.append(Check(name: "ImportOptionChecks.aDryRunAnswersTheChangeAndWritesNothing()") { try await self.importOptions.aDryRunAnswersTheChangeAndWritesNothing() })
        all.append(Check(name: "ImportOptionChecks.ifRevisionAppliesOnlyAtThatRevision()") { try await self.importOptions.ifRevisionAppliesOnlyAtThatRevision() })
        all.append(Check(name: "ImportOptionChecks.aReplaceUnderAPrefixDeletesOnlyThere()") { try await self.importOptions.aReplaceUnderAPrefixDeletesOnlyThere() })
        all.append(Check(name: "ImportOptionChecks.aReplaceKeepsSchemasUnlessToldOtherwise()") { try await self.importOptions.aReplaceKeepsSchemasUnlessToldOtherwise() })
        all.append(Check(name: "BulkChangeChecks.anImportAndAPrefixDeleteAreOneChangeEach()") { try await self.bulkChanges.anImportAndAPrefixDeleteAreOneChangeEach() })
        all.append(Check(name: "BulkChangeChecks.readersSeeAnImportWholeOrNotAtAll()") { try await self.bulkChanges.readersSeeAnImportWholeOrNotAtAll() })
        if capabilities.contains(.largeChanges) {
            all.append(Check(name: "BulkChangeChecks.aFiveThousandKeyImportAndPrefixDeleteAreOneChangeEach()") { try await self.bulkChanges.aFiveThousandKeyImportAndPrefixDeleteAreOneChangeEach() })
            all.append(Check(name: "BulkChangeChecks.readersSeeAFiveThousandKeyImportWholeOrNotAtAll()") { try await self.bulkChanges.readersSeeAFiveThousandKeyImportWholeOrNotAtAll() })
        }
        all.append(Check(name: "ItemChecks.firstSetCreatesVersionOneAtRevisionOne()") { try await self.item.firstSetCreatesVersionOneAtRevisionOne() })
        all.append(Check(name: "ItemChecks.secondSetBumpsVersionAndKeepsCreateRevision()") { try await self.item.secondSetBumpsVersionAndKeepsCreateRevision() })
        all.append(Check(name: "ItemChecks.deleteRecordsTheItemBeforeAndReCreateStartsOver()") { try await self.item.deleteRecordsTheItemBeforeAndReCreateStartsOver() })
        all.append(Check(name: "ItemChecks.deletingAMissingKeyThrowsKeyNotFoundAndChangesNothing()") { try await self.item.deletingAMissingKeyThrowsKeyNotFoundAndChangesNothing() })
        all.append(Check(name: "ItemChecks.setReturnsExactlyWhatGetReadsBack()") { try await self.item.setReturnsExactlyWhatGetReadsBack() })
        all.append(Check(name: "ItemChecks.contentTypeIsKeptAndReplacedBySet()") { try await self.item.contentTypeIsKeptAndReplacedBySet() })
        all.append(Check(name: "ItemChecks.binaryValuesRoundTripByteForByte()") { try await self.item.binaryValuesRoundTripByteForByte() })
        all.append(Check(name: "ItemChecks.emptyValueIsAllowedAndDistinctFromAbsent()") { try await self.item.emptyValueIsAllowedAndDistinctFromAbsent() })
        all.append(Check(name: "ItemChecks.keysAreNormalizedBeforeTheyReachTheStore()") { try await self.item.keysAreNormalizedBeforeTheyReachTheStore() })
        all.append(Check(name: "ItemChecks.configsAreIndependent()") { try await self.item.configsAreIndependent() })
        if capabilities.contains(.leases) {
            all.append(Check(name: "LeaseStoreChecks.aGrantReadsBackExactlyAndItsIdIsNotGrantedTwice()") { try await self.leaseStore.aGrantReadsBackExactlyAndItsIdIsNotGrantedTwice() })
            all.append(Check(name: "LeaseStoreChecks.aLeaseKeepsItsOwner()") { try await self.leaseStore.aLeaseKeepsItsOwner() })
            all.append(Check(name: "LeaseStoreChecks.aRenewalMovesOnlyALiveLeasesExpiry()") { try await self.leaseStore.aRenewalMovesOnlyALiveLeasesExpiry() })
            all.append(Check(name: "LeaseStoreChecks.aClaimTakesALeaseThatRanOutAndTakesItAgain()") { try await self.leaseStore.aClaimTakesALeaseThatRanOutAndTakesItAgain() })
            all.append(Check(name: "LeaseStoreChecks.droppingALeaseForgetsIt()") { try await self.leaseStore.droppingALeaseForgetsIt() })
            all.append(Check(name: "LeaseStoreChecks.leasesAreListedByIdAndKeptPerConfig()") { try await self.leaseStore.leasesAreListedByIdAndKeptPerConfig() })
            all.append(Check(name: "LeaseStoreChecks.leasesChangeNoRevisionOrHistory()") { try await self.leaseStore.leasesChangeNoRevisionOrHistory() })
            all.append(Check(name: "LeaseStoreChecks.deletingAConfigForgetsItsLeases()") { try await self.leaseStore.deletingAConfigForgetsItsLeases() })
            all.append(Check(name: "LeaseStoreChecks.aRenewalAndAClaimOfOneLeaseAreOrdered()") { try await self.leaseStore.aRenewalAndAClaimOfOneLeaseAreOrdered() })
        }
        all.append(Check(name: "ListChecks.recursiveListReturnsEveryKeyUnderThePrefixInByteOrder()") { try await self.list.recursiveListReturnsEveryKeyUnderThePrefixInByteOrder() })
        all.append(Check(name: "ListChecks.nonRecursiveListFoldsDeeperKeysIntoPrefixes()") { try await self.list.nonRecursiveListFoldsDeeperKeysIntoPrefixes() })
        all.append(Check(name: "ListChecks.emptyAndUnmatchedPrefixesListNothing()") { try await self.list.emptyAndUnmatchedPrefixesListNothing() })
        for argument in ListChecks.recursivePagesReturnEveryKeyExactlyOnceArguments {
            all.append(Check(name: "ListChecks.recursivePagesReturnEveryKeyExactlyOnce(limit: \(argument))") { try await self.list.recursivePagesReturnEveryKeyExactlyOnce(limit: argument) })
        }
        for argument in ListChecks.nonRecursivePagesReturnEveryEntryExactlyOnceArguments {
            all.append(Check(name: "ListChecks.nonRecursivePagesReturnEveryEntryExactlyOnce(limit: \(argument))") { try await self.list.nonRecursivePagesReturnEveryEntryExactlyOnce(limit: argument) })
        }
        all.append(Check(name: "ListChecks.pagesSkipKeysThatExpireBetweenPages()") { try await self.list.pagesSkipKeysThatExpireBetweenPages() })
        all.append(Check(name: "ListChecks.badLimitsAreInvalidAndAnyCursorIsAPosition()") { try await self.list.badLimitsAreInvalidAndAnyCursorIsAPosition() })
        all.append(Check(name: "ListChecks.deletePrefixDeletesOnlyKeysUnderItInKeyOrder()") { try await self.list.deletePrefixDeletesOnlyKeysUnderItInKeyOrder() })
        all.append(Check(name: "ListChecks.deletePrefixOfTheRootEmptiesTheConfig()") { try await self.list.deletePrefixOfTheRootEmptiesTheConfig() })
        for argument in PageBudgetChecks.listPagesStayWithinTheBudgetAndVisitEveryEntryOnceArguments {
            all.append(Check(name: "PageBudgetChecks.listPagesStayWithinTheBudgetAndVisitEveryEntryOnce(recursive: \(argument))") { try await self.pageBudget.listPagesStayWithinTheBudgetAndVisitEveryEntryOnce(recursive: argument) })
        }
        all.append(Check(name: "PageBudgetChecks.historyPagesStayWithinTheBudgetAndVisitEveryEventOnce()") { try await self.pageBudget.historyPagesStayWithinTheBudgetAndVisitEveryEventOnce() })
        all.append(Check(name: "PageBudgetChecks.eventBatchesStayWithinTheBudgetAndVisitEveryEventOnce()") { try await self.pageBudget.eventBatchesStayWithinTheBudgetAndVisitEveryEventOnce() })
        all.append(Check(name: "PageBudgetChecks.aPageOfLargeValuesHoldsAtMostTheDefaultBudget()") { try await self.pageBudget.aPageOfLargeValuesHoldsAtMostTheDefaultBudget() })
        all.append(Check(name: "QuotaChecks.byteCountFollowsEveryKindOfChange()") { try await self.quota.byteCountFollowsEveryKindOfChange() })
        all.append(Check(name: "QuotaChecks.changesPastTheQuotaAreRefusedAndShrinkingOnesPass()") { try await self.quota.changesPastTheQuotaAreRefusedAndShrinkingOnesPass() })
        all.append(Check(name: "QuotaChecks.quotaIsKeptReplacedAndRemoved()") { try await self.quota.quotaIsKeptReplacedAndRemoved() })
        all.append(Check(name: "AlarmChecks.aRaisedNoSpaceRefusesWritesOfKeysAndPassesDeletesAndReads()") { try await self.alarms.aRaisedNoSpaceRefusesWritesOfKeysAndPassesDeletesAndReads() })
        all.append(Check(name: "AlarmChecks.aRaisedAlarmOutlivesReopeningTheStore()") { try await self.alarms.aRaisedAlarmOutlivesReopeningTheStore() })
        all.append(Check(name: "AlarmChecks.disarmClearsTheAlarmAndKeepsTheOtherSettings()") { try await self.alarms.disarmClearsTheAlarmAndKeepsTheOtherSettings() })
        all.append(Check(name: "AlarmChecks.eachMembersAlarmIsKeptApartAndAnyRefusesWrites()") { try await self.alarms.eachMembersAlarmIsKeptApartAndAnyRefusesWrites() })
        all.append(Check(name: "AlarmChecks.concurrentRaisesOfDifferentMembersAreAllKept()") { try await self.alarms.concurrentRaisesOfDifferentMembersAreAllKept() })
        all.append(Check(name: "AlarmChecks.concurrentDisarmsLeaveTheOtherAlarmsRaised()") { try await self.alarms.concurrentDisarmsLeaveTheOtherAlarmsRaised() })
        all.append(Check(name: "PageBudgetChecks.transactionReadsShareOnePageBudget()") { try await self.pageBudget.transactionReadsShareOnePageBudget() })
        all.append(Check(name: "PageBudgetChecks.aBudgetBelowOneByteIsRefused()") { try await self.pageBudget.aBudgetBelowOneByteIsRefused() })
        all.append(Check(name: "TTLChecks.ttlSetsExpiresAtAndTheKeyIsReadableUntilThen()") { try await self.ttl.ttlSetsExpiresAtAndTheKeyIsReadableUntilThen() })
        all.append(Check(name: "TTLChecks.expiredKeyIsHiddenFromEveryReadBeforeAnySweep()") { try await self.ttl.expiredKeyIsHiddenFromEveryReadBeforeAnySweep() })
        all.append(Check(name: "TTLChecks.sweepEmitsExactlyOneExpireEvent()") { try await self.ttl.sweepEmitsExactlyOneExpireEvent() })
        all.append(Check(name: "TTLChecks.sweepCoversEveryConfigInKeyOrder()") { try await self.ttl.sweepCoversEveryConfigInKeyOrder() })
        all.append(Check(name: "TTLChecks.setOnAnExpiredKeyFirstRecordsTheExpiry()") { try await self.ttl.setOnAnExpiredKeyFirstRecordsTheExpiry() })
        all.append(Check(name: "TTLChecks.anyWriteExpiresDueKeysFirst()") { try await self.ttl.anyWriteExpiresDueKeysFirst() })
        all.append(Check(name: "TTLChecks.setWithoutTTLClearsAnEarlierTTL()") { try await self.ttl.setWithoutTTLClearsAnEarlierTTL() })
        all.append(Check(name: "TTLChecks.newTTLReplacesTheOldOne()") { try await self.ttl.newTTLReplacesTheOldOne() })
        for argument in TTLChecks.invalidTTLIsRejectedAndChangesNothingArguments {
            all.append(Check(name: "TTLChecks.invalidTTLIsRejectedAndChangesNothing(ttl: \(argument))") { try await self.ttl.invalidTTLIsRejectedAndChangesNothing(ttl: argument) })
        }
        all.append(Check(name: "TTLChecks.longestTTLIsAccepted()") { try await self.ttl.longestTTLIsAccepted() })
        if capabilities.contains(.tokens) {
            all.append(Check(name: "TokenStoreChecks.scopesRoundTrip()") { try await self.tokenStore.scopesRoundTrip() })
            all.append(Check(name: "TokenStoreChecks.issuedOutlivesRevocation()") { try await self.tokenStore.issuedOutlivesRevocation() })
        }
        all.append(Check(name: "ValidationChecks.valueOfExactlyTheLimitIsAccepted()") { try await self.validation.valueOfExactlyTheLimitIsAccepted() })
        all.append(Check(name: "ValidationChecks.valueOneByteOverTheLimitIsTooLargeAndChangesNothing()") { try await self.validation.valueOneByteOverTheLimitIsTooLargeAndChangesNothing() })
        for argument in ValidationChecks.badContentTypeIsInvalidAndChangesNothingArguments {
            all.append(Check(name: "ValidationChecks.badContentTypeIsInvalidAndChangesNothing(contentType: \(argument))") { try await self.validation.badContentTypeIsInvalidAndChangesNothing(contentType: argument) })
        }
        all.append(Check(name: "ValidationChecks.validationComesBeforeConditions()") { try await self.validation.validationComesBeforeConditions() })
        all.append(Check(name: "ValidationChecks.largestRevision()") { try await self.validation.largestRevision() })
        all.append(Check(name: "WatchChecks.prefixWatchReplaysThenFollowsWithoutGapOrRepeat()") { try await self.watch.prefixWatchReplaysThenFollowsWithoutGapOrRepeat() })
        all.append(Check(name: "WatchChecks.keyWatchSeesOnlyThatKey()") { try await self.watch.keyWatchSeesOnlyThatKey() })
        all.append(Check(name: "WatchChecks.rootWatchFromRevisionOneSeesEverything()") { try await self.watch.rootWatchFromRevisionOneSeesEverything() })
        all.append(Check(name: "WatchChecks.watchFromNowDeliversOnlyLaterChanges()") { try await self.watch.watchFromNowDeliversOnlyLaterChanges() })
        all.append(Check(name: "WatchChecks.manyWritesWhileWatchingArriveInOrderExactlyOnce()") { try await self.watch.manyWritesWhileWatchingArriveInOrderExactlyOnce() })
        all.append(Check(name: "WatchChecks.watchFromACompactedRevisionEndsWithCompacted()") { try await self.watch.watchFromACompactedRevisionEndsWithCompacted() })
        all.append(Check(name: "WatchChecks.cancellingTheConsumerEndsTheWatch()") { try await self.watch.cancellingTheConsumerEndsTheWatch() })
        all.append(Check(name: "WatchChecks.deletingTheConfigEndsTheWatchWithConfigNotFound()") { try await self.watch.deletingTheConfigEndsTheWatchWithConfigNotFound() })
        all.append(Check(name: "WatchChecks.aConfigDeletedAndCreatedAgainEndsTheWatch()") { try await self.watch.aConfigDeletedAndCreatedAgainEndsTheWatch() })
        all.append(Check(name: "WatchChecks.expiryReachesAWatcherWithoutAnyOtherWrite()") { try await self.watch.expiryReachesAWatcherWithoutAnyOtherWrite() })
        all.append(Check(name: "WatchChecks.eventBatchesReportHowFarTheyRead()") { try await self.watch.eventBatchesReportHowFarTheyRead() })
        for argument in WatchChecks.walkingEventBatchesYieldsEveryEventOnceArguments {
            all.append(Check(name: "WatchChecks.walkingEventBatchesYieldsEveryEventOnce(limit: \(argument))") { try await self.watch.walkingEventBatchesYieldsEveryEventOnce(limit: argument) })
        }
        all.append(Check(name: "WatchChecks.eventsFromACompactedRevisionThrowCompacted()") { try await self.watch.eventsFromACompactedRevisionThrowCompacted() })
        all.append(Check(name: "WatchChecks.eventsRejectBadLimits()") { try await self.watch.eventsRejectBadLimits() })
        for argument in JSONValueChecks.invalidJSONIsRefusedWithItsLineAndColumnArguments {
            all.append(Check(name: "JSONValueChecks.invalidJSONIsRefusedWithItsLineAndColumn(contentType: \(argument))") { try await self.jsonValue.invalidJSONIsRefusedWithItsLineAndColumn(contentType: argument) })
        }
        all.append(Check(name: "JSONValueChecks.theSameBytesWithAnotherContentTypeAreKept()") { try await self.jsonValue.theSameBytesWithAnotherContentTypeAreKept() })
        all.append(Check(name: "JSONValueChecks.aTransactionPutOfInvalidJSONChangesNothing()") { try await self.jsonValue.aTransactionPutOfInvalidJSONChangesNothing() })
        all.append(Check(name: "JSONValueChecks.anImportOfInvalidJSONChangesNothing()") { try await self.jsonValue.anImportOfInvalidJSONChangesNothing() })
        all.append(Check(name: "PatchChecks.aMergePatchChangesMembersAndKeepsTypeAndTTL()") { try await self.patch.aMergePatchChangesMembersAndKeepsTypeAndTTL() })
        all.append(Check(name: "PatchChecks.aJSONPatchAppliesEveryOperationInOrder()") { try await self.patch.aJSONPatchAppliesEveryOperationInOrder() })
        for argument in PatchChecks.aPatchThatDoesNotApplyChangesNothingArguments {
            all.append(Check(name: "PatchChecks.aPatchThatDoesNotApplyChangesNothing(patch: \(argument))") { try await self.patch.aPatchThatDoesNotApplyChangesNothing(patch: argument) })
        }
        all.append(Check(name: "PatchChecks.aPatchOfAnAbsentKeyIsKeyNotFound()") { try await self.patch.aPatchOfAnAbsentKeyIsKeyNotFound() })
        all.append(Check(name: "PatchChecks.aPatchOfAValueThatIsNotJSONIsPatchFailed()") { try await self.patch.aPatchOfAValueThatIsNotJSONIsPatchFailed() })
        all.append(Check(name: "PatchChecks.aPatchWhoseConditionsFailReturnsTheCurrentItemAndChangesNothing()") { try await self.patch.aPatchWhoseConditionsFailReturnsTheCurrentItemAndChangesNothing() })
        all.append(Check(name: "PatchChecks.aTransactionsPatchAndPutShareOneRevision()") { try await self.patch.aTransactionsPatchAndPutShareOneRevision() })
        all.append(Check(name: "PatchChecks.concurrentMergePatchesLoseNoMember()") { try await self.patch.concurrentMergePatchesLoseNoMember() })
        all.append(Check(name: "DocumentChecks.aDocumentNestsKeysAndEmbedsTheirValues()") { try await self.document.aDocumentNestsKeysAndEmbedsTheirValues() })
        all.append(Check(name: "DocumentChecks.aKeyThatIsAlsoADirectoryIsNotOneDocument()") { try await self.document.aKeyThatIsAlsoADirectoryIsNotOneDocument() })
        all.append(Check(name: "DocumentChecks.aDocumentAtAPastRevisionIsTheKeysAsTheyWereThen()") { try await self.document.aDocumentAtAPastRevisionIsTheKeysAsTheyWereThen() })
        all.append(Check(name: "DocumentChecks.putDocumentWritesOnlyChangedKeysAtOneRevision()") { try await self.document.putDocumentWritesOnlyChangedKeysAtOneRevision() })
        all.append(Check(name: "DocumentChecks.putDocumentWithReplaceDeletesTheKeysItLacks()") { try await self.document.putDocumentWithReplaceDeletesTheKeysItLacks() })
        all.append(Check(name: "DocumentChecks.aDocumentThatChangesNothingKeepsTheRevision()") { try await self.document.aDocumentThatChangesNothingKeepsTheRevision() })
        all.append(Check(name: "DocumentChecks.anInvalidDocumentChangesNothing()") { try await self.document.anInvalidDocumentChangesNothing() })
        all.append(Check(name: "SchemaChecks.aKeySchemaRefusesEveryWriteThatBreaksIt()") { try await self.schema.aKeySchemaRefusesEveryWriteThatBreaksIt() })
        all.append(Check(name: "SchemaChecks.aKeyWithASchemaHoldsJSONWhateverItsContentType()") { try await self.schema.aKeyWithASchemaHoldsJSONWhateverItsContentType() })
        all.append(Check(name: "SchemaChecks.aPrefixSchemaChecksTheDocumentOfItsKeys()") { try await self.schema.aPrefixSchemaChecksTheDocumentOfItsKeys() })
        all.append(Check(name: "SchemaChecks.attachingASchemaThatValuesBreakIsRefusedUnlessForced()") { try await self.schema.attachingASchemaThatValuesBreakIsRefusedUnlessForced() })
        all.append(Check(name: "SchemaChecks.removingASchemaAllowsTheWrite()") { try await self.schema.removingASchemaAllowsTheWrite() })
        for argument in SchemaChecks.anInvalidSchemaIsRefusedArguments {
            all.append(Check(name: "SchemaChecks.anInvalidSchemaIsRefused(schema: \(argument))") { try await self.schema.anInvalidSchemaIsRefused(schema: argument) })
        }
        all.append(Check(name: "SchemaChecks.schemasHaveHistoryAndTravelWithAnExport()") { try await self.schema.schemasHaveHistoryAndTravelWithAnExport() })
        for argument in SchemaChecks.discfgsOwnPrefixHoldsOnlySchemasArguments {
            all.append(Check(name: "SchemaChecks.discfgsOwnPrefixHoldsOnlySchemas(path: \(argument))") { try await self.schema.discfgsOwnPrefixHoldsOnlySchemas(path: argument) })
        }
        all.append(Check(name: "SchemaChecks.aSchemaIsRemovedOnlyAsASchema()") { try await self.schema.aSchemaIsRemovedOnlyAsASchema() })
        all.append(Check(name: "SchemaChecks.expiryIsNeverRefusedByASchema()") { try await self.schema.expiryIsNeverRefusedByASchema() })
        for argument in FlagSetChecks.aFlagSetFlagdRefusesIsRefusedArguments {
            all.append(Check(name: "FlagSetChecks.aFlagSetFlagdRefusesIsRefused(flagSet: \(argument))") { try await self.flagSets.aFlagSetFlagdRefusesIsRefused(flagSet: argument) })
        }
        all.append(Check(name: "FlagSetChecks.aJSONPatchThatBreaksAFlagSetIsRefused()") { try await self.flagSets.aJSONPatchThatBreaksAFlagSetIsRefused() })
        all.append(Check(name: "FlagSetChecks.flagSetsShareNoFlagKey()") { try await self.flagSets.flagSetsShareNoFlagKey() })
        all.append(Check(name: "FlagSetChecks.aFlagSetThatExpiredNoLongerClaimsItsKeys()") { try await self.flagSets.aFlagSetThatExpiredNoLongerClaimsItsKeys() })
        all.append(Check(name: "DeploymentChecks.aStartStagesTheCandidateAndLeavesTheLiveKeys()") { try await self.deployments.aStartStagesTheCandidateAndLeavesTheLiveKeys() })
        all.append(Check(name: "DeploymentChecks.writesUnderARunningDeploymentAreRefusedNamingIt()") { try await self.deployments.writesUnderARunningDeploymentAreRefusedNamingIt() })
        all.append(Check(name: "DeploymentChecks.oneDeploymentRunsOnAPrefixAtATime()") { try await self.deployments.oneDeploymentRunsOnAPrefixAtATime() })
        all.append(Check(name: "DeploymentChecks.completeMakesTheCandidateLiveAndRevertPutsTheStableBack()") { try await self.deployments.completeMakesTheCandidateLiveAndRevertPutsTheStableBack() })
        all.append(Check(name: "DeploymentChecks.aRevertOverALaterChangeIsRefused()") { try await self.deployments.aRevertOverALaterChangeIsRefused() })
        all.append(Check(name: "DeploymentChecks.aRollbackDropsTheCandidateAndFreesThePrefix()") { try await self.deployments.aRollbackDropsTheCandidateAndFreesThePrefix() })
        all.append(Check(name: "DeploymentChecks.anExportWithDeploymentsImportsWithoutThem()") { try await self.deployments.anExportWithDeploymentsImportsWithoutThem() })
        all.append(Check(name: "DeploymentChecks.aCandidateThatBreaksASchemaIsRefused()") { try await self.deployments.aCandidateThatBreaksASchemaIsRefused() })
        all.append(Check(name: "HealthReportChecks.reportsAreKeptPerReporterApartFromHistory()") { try await self.healthReports.reportsAreKeptPerReporterApartFromHistory() })
        all.append(Check(name: "HealthReportChecks.aReportForNoRunningDeploymentIsRefused()") { try await self.healthReports.aReportForNoRunningDeploymentIsRefused() })
        return all
    }
}
