"""One plain sentence for each number the pages show: what it means and which way is good."""

EXPLANATIONS = {
    "shares": "The node's entitlement among its siblings: more shares, a bigger slice.",
    "fairshare_perc": (
        "Target share: the fraction of the whole machine this node is entitled to"
        " (its shares over its siblings', times its parent's target)."
    ),
    "usage": "Decayed usage charged so far (for a group: 1 plus its leaves'); it halves"
    " with every decay, so old work counts less.",
    "usage_share": "Share of usage: the node's fraction of all usage in the tree.",
    "usage_perc": "usage/perc: usage divided by the target share; among siblings, the lower"
    " one is more deserving.",
    "fairshare_tree_usage": "Effective usage: the node's share of usage blended with its"
    " ancestors'; above the target share means over target.",
    "fairshare_factor": "Fairshare factor: 0.5 is exactly on target, higher is more deserving"
    " (jobs start sooner), lower means over target.",
    "norm_shares": "NormShares: the shares over the siblings' shares.",
    "effectv_usage": "EffectvUsage: the fraction of the parent's usage this association used.",
    "level_fs": "Level FS: NormShares over EffectvUsage; above 1 is under target (good), below"
    " 1 over target; Slurm sorts siblings by it, highest first.",
    "fairshare": "FairShare: the user's rank turned into a factor; 1.0 is the most deserving"
    " user of the cluster, lower is less.",
    "fairshare_rank": "Rank: Slurm's rank of the user; FairShare is rank over the number of"
    " users, so a higher rank is better.",
    "standing": "Place among all the cluster's entities: 1st is the most deserving (pbsfs -c"
    " order on PBS, Fair Tree's ranking on Slurm), so a smaller place is better.",
    "trend": "The factor's change over the last 7 days: ↑ more deserving than a week ago, ↓"
    " less, → steady.",
}

EXPLANATIONS |= {
    "import_entries": "Entries (groups and entities) of the resource_group that now make the"
    " cluster's tree.",
    "import_keys": "Fairshare keys the sched_config set; keys it leaves unset take PBS's"
    " defaults, as the scheduler would.",
    "import_records": "Usage records of the file that are now the entities' usage.",
    "import_read": "Records read from the logs: each is stored, recognised as carrying no job"
    " run, or rejected.",
    "import_ingested": "Job runs that ended and were stored for the first time, each charged to"
    " its entity.",
    "import_running": "Runs started but not ended in these logs; stored as running until a later"
    " log holds their end.",
    "import_duplicates": "Records of runs already stored; they add nothing, so uploading the same"
    " log again is harmless.",
    "import_rejected": "Lines (records of a usage file) not taken, each listed below with its"
    " reason; 0 is what you want.",
    "import_nodes_added": "Entries the import added to the tree (each in the audit trail).",
    "import_nodes_updated": "Entries whose shares or parent the import changed (each in the"
    " audit trail).",
    "import_nodes_removed": "Entries no longer in the file, taken out of the tree (each in the"
    " audit trail; an entity's usage stays, under unknown).",
    "import_unknown_entities": "Entities with usage that the tree does not hold; PBS charges"
    " them under `unknown`, so fewer is better.",
}
