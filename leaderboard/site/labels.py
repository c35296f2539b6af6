"""The site's labels in the languages it speaks: one catalogue, English message → translation.

English needs no table (a message is its own English); a message a language's table lacks shows in English. Templates
translate a literal message with the filter t (named values in braces: `"{n} judges" | t(n=3)`) and values that read as
words (views, categories, statuses) with the filter word; the charts and judge labels take a plain `t`. The test of the
catalogue (tests/leaderboard/site/test_site_language.py) finds every message in the templates and the code and checks each
language's table has them all, and nothing else.
"""
from __future__ import annotations

from typing import Any, Callable

from markupsafe import Markup, escape

# Values shown as words: the views (categories, built-in dimensions), statuses, verdict outcomes, the default title.
WORDS = ("overall", "fact", "value", "policy", "argument", "source", "language", "scheduled", "running", "awaiting",
         "done", "failed", "tie", "length", "citations", "markdown", "rationale", "Debate Arena leaderboard")

ZH: dict[str, str] = {
    # words
    "overall": "总体", "fact": "事实", "value": "价值", "policy": "政策", "argument": "论证", "source": "来源",
    "language": "语言", "scheduled": "待进行", "running": "进行中", "awaiting": "等待发言", "done": "已完成", "failed": "失败", "tie": "平局",
    "length": "篇幅", "citations": "引用", "markdown": "Markdown 格式", "rationale": "理由",
    "Debate Arena leaderboard": "Debate Arena 排行榜",
    # navigation and banners (base)
    "Site": "站点", "Leaderboard": "排行榜", "Matches": "比赛", "Win probabilities": "胜率",
    "Ratings over time": "评分变化", "Consistency of judges": "评委一致性", "Methodology": "方法",
    "Judges' biases": "评委偏向",
    "the judges of {source}, imported — not one of this arena's judges.": "{source} 的评委，为导入数据，并非本竞技场的评委。",
    "another arena": "另一个竞技场",
    "Its verdicts are that source's own panel's{panelists}, brought in by {command}; the arena never ran it.":
        "其裁决来自该来源自己的评审团{panelists}，由 {command} 导入；本竞技场从未运行它。",
    "Simulated results.": "模拟结果。",
    # what the simulator made, part by part (_simulation)
    "What the offline simulator made here, and what it did not:": "离线模拟器在此生成了哪些内容、哪些没有：",
    "Some results here come from the offline simulator: they test the pipeline and say nothing about any real model.":
        "此处部分结果来自离线模拟器：仅用于检验流程，不代表任何真实模型。",
    "Speeches": "发言", "Web search": "网络搜索", "Verdicts": "裁决", "Its speeches": "其发言",
    "Its web search": "其网络搜索", "Its opponents' speeches and searches": "其对手的发言与搜索",
    "Verdicts on its matches": "其比赛的裁决",
    "{what}: not simulated": "{what}：非模拟", "{what}: simulated ({whose})": "{what}：模拟（{whose}）",
    "{what}: simulated in {n} of {total} matches": "{what}：{total} 场比赛中有 {n} 场为模拟",
    "written by the simulator for entries on {models} models, not by an LLM":
        "由模拟器为运行于 {models} 模型的参赛者生成，并非大语言模型所写",
    "the offline search provider's: the sources cited are stand-ins the simulator wrote, not found on the web":
        "来自离线搜索：所引来源是模拟器编写的替代品，并非从网上检索所得",
    "decided by the simulator for judges on {models} models, not by an LLM or a person":
        "由模拟器为运行于 {models} 模型的评委作出，并非大语言模型或真人所判",
    "not estimated: its interval is too wide to mean anything": "未能估计：其区间过宽，数值没有意义",
    "written by the entries' models": "由参赛者的模型撰写", "given by the judges' models or people": "由评委的模型或真人给出",
    "Matches simulated where they were played (imported so), which parts not recorded: {n}":
        "在原处即为模拟的比赛（按此导入），未记录哪些部分为模拟：{n} 场",
    "None of this entry's matches is simulated; its rating is fitted together with the other matches, some of which "
    "are (see the {leaderboard}).":
        "该参赛者的比赛均非模拟；但其评分与其他比赛一同拟合，其中部分为模拟（见{leaderboard}）。",
    "generated {time}": "生成于 {time}", "ratings from judge {judge}": "评分来自评委 {judge}",
    # the leaderboard table and its tabs
    "Rank (UB)": "排名（上界）", "Entry": "参赛者", "Debater": "辩手", "Model": "模型", "Rating": "评分",
    "95% CI": "95% 置信区间", "W–T–L": "胜–平–负",
    "share of its matches debated to the end: the rest it forfeited": "辩论至终局的比赛所占比例，其余为弃权",
    "Reliability": "完赛率", "Cost / match": "每场费用",
    "how many entries are surely better, plus one": "确定优于它的参赛者数加一",
    "the range, low–high, that holds the rating with 95% confidence": "以 95% 置信度包含评分的范围（下限–上限）",
    # the legend beside the board (_views)
    "How to read the board": "如何阅读排行榜",
    "Elo scale, mean 1000; 100 points ahead is a 64% expected score": "Elo 尺度，均值 1000；领先 100 分即预期得分率 64%",
    "low–high, the rating's 95% interval: wide when there are few matches": "下限–上限，即评分的 95% 区间：比赛少时较宽",
    "1 + the entries whose interval lies wholly above this one's: entries not told apart share a rank":
        "1 加上区间整体高于本参赛者区间的参赛者数：分不出高下的参赛者名次相同",
    "wins–ties–losses": "胜–平–负场数",
    "share of its matches debated to the end; the rest it forfeited": "辩论至终局的比赛所占比例；其余为弃权",
    "fewer than 15 matches": "比赛少于 15 场",
    "provisional": "暂定", "simulated": "模拟", "{n} forfeit": "弃权 {n} 场", "{n} forfeits": "弃权 {n} 场",
    "cost includes calls whose price is unknown": "费用包含价格未知的调用", "No judged matches yet.": "尚无已评判的比赛。",
    "Pro advantage, fitted with these ratings: {e} Elo (95% CI {low} to {high}): against a Con side of equal "
    "rating, Pro scores {share}%.":
        "正方优势（与这些评分一同拟合）：{e} Elo（95% 置信区间 {low} 至 {high}）：面对评分相同的反方，正方得分率为 {share}%。",
    "How the side is modelled": "持方如何建模",
    "The Pro side is not modelled here ({setting}): these are the side-blind ratings.":
        "此处未对正方持方建模（{setting}）：这些是不考虑持方的评分。",
    "Separability {share}: of the {pairs} pairs of entries, {n} have 95% intervals that do not overlap.":
        "可分性 {share}：{pairs} 对参赛者中，有 {n} 对的 95% 区间互不重叠。",
    "Separability {share}: the two entries' 95% intervals do not overlap.": "可分性 {share}：两位参赛者的 95% 区间互不重叠。",
    "Separability {share}: the two entries' 95% intervals overlap.": "可分性 {share}：两位参赛者的 95% 区间相互重叠。",
    "What it measures": "它衡量什么",
    "Why it matters": "为何重要", "Leaderboard views": "排行榜视图", "{category} motions": "{category}类辩题",
    "{dimension} (dimension)": "{dimension}（维度）", "{view} ratings": "{view}评分",
    "Ratings with 95% intervals": "评分及 95% 区间", "Predicted win probabilities": "预测胜率",
    "Row entry against column entry; each cell prints the predicted probability that the row entry wins; hover or "
    "tap a cell for the observed results.":
        "行参赛者对列参赛者；每格标出行参赛者获胜的预测概率；悬停或轻触格子可查看实际结果。",
    "Larger view": "放大查看",
    # raw and controlled ratings
    "Ratings:": "评分：", "raw": "原始", "controlled for {features}": "控制{features}后",
    "What is controlled, and how": "控制了什么、如何控制",
    "{view} ratings, controlled for {features}": "{view}评分（控制{features}后）",
    "Controlled for style, fitted with these ratings: each rating is what the entry wins with its speeches level with "
    "its opponent's. What the judge gives a side per unit of x = (PRO − CON) / (PRO + CON):":
        "已控制风格，与这些评分一同拟合：每个评分是参赛者在发言风格与对手持平时的得分。评委按 x = (PRO − CON) / (PRO + CON) "
        "每单位给一方的加分：",
    "{feature} {coef} Elo (95% CI {low} to {high})": "{feature} {coef} Elo（95% 置信区间 {low} 至 {high}）", "; ": "；",
    "Controlled ratings": "控制风格后的评分",
    # the embargo
    "{n} match awaiting ballots": "{n} 场比赛等待投票",
    "is not shown: people are judging it blind, so its debate, sides and verdicts appear here, and count in the "
    "ratings, once all its ballots are in or the ballots are closed.":
        "暂不显示：评审正在盲评，待全部选票收齐或投票关闭后，其辩论、持方与裁决才会在此显示并计入评分。",
    "{n} matches awaiting ballots": "{n} 场比赛等待投票",
    "are not shown: people are judging them blind, so their debate, sides and verdicts appear here, and count in the "
    "ratings, once all their ballots are in or the ballots are closed.":
        "暂不显示：评审正在盲评，待全部选票收齐或投票关闭后，其辩论、持方与裁决才会在此显示并计入评分。",
    "{n} match still to be played is not listed while people are judging.": "评审进行期间，{n} 场待进行的比赛不列出。",
    "{n} matches still to be played are not listed while people are judging.": "评审进行期间，{n} 场待进行的比赛不列出。",
    # intervals
    "robust (sandwich) normal intervals clustered by match": "按比赛聚类的稳健（三明治）正态区间",
    "the 2.5th and 97.5th percentiles of {n} bootstrap replicates": "{n} 次自助法重抽样的第 2.5 与第 97.5 百分位数",
    "none (nothing rated yet)": "无（尚无评分）", "the overall ratings' are {method}": "总体评分采用{method}",
    "; the category and dimension tabs' are {method}": "；类别与维度标签页采用{method}",
    # judges
    "Judges": "评委", "Ratings by judge:": "各评委的评分：", "(shown here)": "（即本页所示）",
    "How far the judges agree": "评委间的一致程度", "Ratings from judge {judge}": "评委 {judge} 的评分",
    "{n} rated matches": "{n} 场计分比赛",
    "the rating judge: these are the ratings of the {leaderboard}": "计分评委：即{leaderboard}的评分",
    "leaderboard": "排行榜",
    "This judge's verdicts are simulated (ballots cast for the tests, not by people): they test the pipeline and "
    "say nothing about any real judge.":
        "该评委的裁决为模拟（选票为测试所投，并非真人）：仅用于检验流程，不代表任何真实评委。",
    "This judge's verdicts are simulated: they test the pipeline and say nothing about any real judge.":
        "该评委的裁决为模拟：仅用于检验流程，不代表任何真实评委。",
    "This judge's verdicts are its model's own, but debates it judged are simulated in part (their speeches or web "
    "search came from the simulator, as each match's page says): its ratings say nothing about real debaters.":
        "该评委的裁决出自其模型本身，但它评判的部分辩论含有模拟内容（发言或网络检索来自模拟器，详见各场比赛页面）："
        "其评分不能说明真实辩手的水平。",
    "The judge": "评委", "Kind": "类型", "People (R)": "评审人（R）", "Source": "来源", "Panelists": "评审团成员",
    "Runs (R)": "次数（R）", "Identical runs": "完全相同的各次评判",
    "no match judged two times or more": "没有评判两次及以上的比赛",
    "{share}% of the matches it judged two times or more: every run gave the same verdict and rationale":
        "在其评判两次及以上的比赛中占 {share}%：每次评判的裁决与理由都完全相同",
    "Self-contradictions": "自相矛盾", "{n} of its runs named a winner their own scores put behind":
        "{n} 次评判判定的胜方在其自己的评分中反而落后",
    "up to {n} per match: the source's judge rows of it": "每场至多 {n} 次：来源中该场的评委记录",
    # a judge's last attack run (judge), and what the attacks are (methodology)
    "Under attack": "受攻击时的表现", "Judges under attack": "受攻击的评委", "What each attack does": "各种攻击的做法",
    "Its last run of {command}, begun {time}: each attack changed debates against the side this judge's own verdict "
    "found losing, and the judge read them again. A flip is a verdict that went to the attacked side; caught counts "
    "the attacked speeches the arena's speech checks would have refused before any judge read them.":
        "其最近一次 {command} 运行，始于 {time}：每种攻击都针对该评委自己的裁决判负的一方改动辩论，再由该评委重新评判。"
        "翻转是指裁决转向了受攻击的一方；拦截数是赛场的发言检查会在任何评委阅读之前拒收的受攻击发言数。",
    "This judge is the offline simulator: these flip rates test the pipeline and say nothing about any real judge.":
        "该评委是离线模拟器：这些翻转率仅用于检验流程，不代表任何真实评委。",
    "How often each attack turned this judge's verdict to the attacked side": "每种攻击使该评委的裁决转向受攻击一方的频率",
    "Attack": "攻击", "Trials": "试验数", "Flips": "翻转数", "Flip rate (95% CI)": "翻转率（95% 置信区间）",
    "Caught": "拦截数",
    "Each person casts one ballot per match, blind to all but PRO and CON; a ballot gives the winner 1 point and a "
    "tie 0.5 to each side, so with all {n} ballots cast a match scores (PRO, CON) points that sum to {n}, weighted "
    "as any judge's R runs are. A match counts with the ballots cast on it: fewer ballots give a smaller total, so a "
    "unanimous match with fewer ballots weighs less; a match with none is not rated.":
        "每位评审每场投一票，只看到正方（PRO）与反方（CON）；一票给胜方 1 分，平局双方各 0.5 分，因此 {n} 票全部投出时，"
        "一场比赛的（正方，反方）得分之和为 {n}，其权重与任何评委的 R 次评判相同。比赛按实际投出的票计分：票数越少总分越小，"
        "因此票数较少的一致裁决权重较低；没有选票的比赛不计分。",
    "Weighted Bradley–Terry on the Elo scale (mean 1000), fitted to this judge's verdicts alone; 95% intervals from "
    "bootstrap replicates over matches.":
        "Elo 尺度上的加权 Bradley–Terry 模型（均值 1000），仅依据该评委的裁决拟合；95% 区间来自按比赛的自助法重抽样。",
    # consistency
    "Consistency": "一致性", "Cohen's κ": "Cohen κ 系数", "Pairs of judges": "评委两两比较",
    "Consistency of each pair of judges": "每对评委的一致性", "Judge": "评委",
    "Only one judge: there is no pair to compare.": "只有一位评委：无可比较的评委对。",
    "The people of judge {judge}": "评委 {judge} 的评审人",
    "Consistency of each pair of the people of judge {judge}": "评委 {judge} 的每对评审人的一致性", "Person": "评审人",
    "One person: there is no pair to compare.": "只有一位评审人：无可比较的评审人对。",
    "Each person against the other judges": "每位评审人与其他评委的比较",
    "Consistency of each person of judge {judge} with each other judge": "评委 {judge} 的每位评审人与其他各评委的一致性",
    # biases
    "What the judges lean to": "评委的偏向",
    "Each judge's and panelist's lean to Pro, to the longer side and to its own family":
        "各评委及评审团成员对正方、对篇幅较长一方、对同家族模型的偏向",
    "Panelist": "评审团成员", "Votes": "票数", "Pro share": "正方得票率",
    "Longer side's share": "篇幅较长一方得票率", "Length (Elo per unit of x)": "篇幅系数（每单位 x 的 Elo）",
    "Own family vs others": "同家族：其得票率对其他评委", "{own} vs {others}": "{own} 对 {others}", "to": "至", "{n} vote": "{n} 票",
    "{n} votes": "{n} 票", "No judge has voted yet.": "尚无评委投票。",
    # an entry
    "retired": "已退役",
    "This entry is no longer in the workspace's {file}; its configuration is not known here.":
        "该参赛者已不在工作区的 {file} 中；此处不知其配置。",
    "Configuration": "配置", "Record": "战绩",
    "Rating {rating} (95% CI {low}–{high}), Rank (UB) {rank}; {wins} wins, {ties} ties, {losses} losses in "
    "{matches} matches":
        "评分 {rating}（95% 置信区间 {low}–{high}），排名（上界）{rank}；{matches} 场比赛中 {wins} 胜、{ties} 平、{losses} 负",
    "(provisional)": "（暂定）", ".": "。", ":": "：", "Not rated yet.": "尚未评分。",
    "Cost: {total} in all, {each} per match": "费用：共 {total}，每场 {each}", "Tokens per agent role": "各智能体角色的令牌用量",
    "Role": "角色", "Calls": "调用次数", "Prompt tokens": "提示令牌", "Completion tokens": "生成令牌",
    "No speeches yet.": "尚无发言。", "Match": "比赛", "Motion": "辩题",
    "Side": "持方", "Opponent": "对手", "Status": "状态", "Result (for–against)": "结果（己方–对方）", "won": "胜",
    "lost": "负", "tied": "平", "No matches yet.": "尚无比赛。",
    # history
    "Each entry's rating (line) and 95% interval (band) after every {step} of the {total} matches judged by "
    "{judge}, in the order they finished.":
        "评委 {judge} 评判的 {total} 场比赛中，按完赛顺序每 {step} 场后各参赛者的评分（折线）及 95% 区间（色带）。",
    "Each point is the weighted Bradley–Terry fit of the matches finished so far, so the last one is the "
    "leaderboard's rating. The bands are robust (sandwich) normal intervals, one fit per point, not the "
    "leaderboard's bootstrap intervals, which would cost a bootstrap per point; bands wider than the chart are cut at "
    "its edge. Hover a line for its entry.":
        "每个点是对截至当时已完赛比赛的加权 Bradley–Terry 拟合，因此最后一点即排行榜上的评分。色带为稳健（三明治）正态区间，"
        "每点拟合一次，而非排行榜的自助法区间（那需要每点做一次自助法）；超出图表的色带在边缘截断。悬停折线可查看对应参赛者。",
    "Every point is in {file}, in the shape {command} gives.": "所有数据点见 {file}，格式与 {command} 的输出相同。",
    "Key to the chart: each entry's line, last rating and first rated match count":
        "图例：各参赛者的折线、最新评分及首次获评时的比赛数",
    "Line": "线条", "First rated after": "首次获评于", "No judged matches yet: the ratings have no history.":
        "尚无已评判的比赛：评分尚无历史。",
    # the index
    "{n} entry": "{n} 位参赛者", "{n} entries": "{n} 位参赛者", "{n} match debated": "已辩论 {n} 场比赛",
    "{n} matches debated": "已辩论 {n} 场比赛",
    "separability {share}: {n} of 1 pair apart": "可分性 {share}：1 对中 {n} 对可区分",
    "separability {share}: {n} of {pairs} pairs apart": "可分性 {share}：{pairs} 对中 {n} 对可区分",
    "pairs of entries whose 95% intervals do not overlap": "95% 区间互不重叠的参赛者对",
    "{n} judge": "{n} 位评委", "{n} judges": "{n} 位评委", "last update {time}": "最后更新 {time}",
    "no judge configured": "未配置评委",
    "Weighted Bradley–Terry on the Elo scale (mean 1000)": "Elo 尺度上的加权 Bradley–Terry 模型（均值 1000）",
    ", with the Pro side's advantage fitted alongside (below each table)": "，并同时拟合正方的持方优势（见各表下方）",
    "; 95% intervals ({methods}), each under a weak prior on every rating (SD {sd} Elo), so an entry with few matches "
    "shows a wide interval, never a falsely certain one; Rank (UB) is 1 + the number of entries whose lower bound is "
    "above this entry's upper bound.":
        "；95% 区间（{methods}）均在每个评分的弱先验（标准差 {sd} Elo）下得出，因此比赛少的参赛者显示宽区间，而非虚假的确定性；"
        "排名（上界）为 1 加上下界高于本参赛者上界的参赛者数。",
    "Entries with fewer than 15 matches are provisional.": "比赛少于 15 场的参赛者评分为暂定。",
    # a match
    "PRO argues:": "正方（PRO）主张：", "CON argues:": "反方（CON）主张：", "Match {id}": "比赛 {id}",
    "{category} motion": "{category}类辩题", "Pro:": "正方：", "Con:": "反方：", "status {status}": "状态：{status}",
    "Score: PRO {pro} – CON {con}": "比分：正方 {pro} – 反方 {con}", "(judge {judge})": "（评委 {judge}）",
    "Error:": "错误：", "Forfeit:": "弃权：",
    "{side} could not finish the debate, so {winner} takes every run of every judge. No judge read it.":
        "{side} 未能完成辩论，因此 {winner} 赢得每位评委的每次评判。没有评委阅读此场。",
    "Info slide:": "背景材料：",
    "This speech was cut off: the model reached its length cap before it finished.": "该发言被截断：模型在完成前达到了长度上限。",
    "References": "参考资料", "Verdicts": "裁决", "(rating judge)": "（计分评委）", "Run": "次", "Overall": "总体",
    "Rationale": "理由", "Not judged yet.": "尚未评判。",
    # the matches list
    "(page {page} of {pages})": "（第 {page} 页，共 {pages} 页）", "Pages of the matches list ({where})": "比赛列表分页（{where}）",
    "← Previous": "← 上一页", "Next →": "下一页 →",
    "Matches {first}–{last} of {total}, in schedule order, {per_page} to a page; sorting a column sorts this page's "
    "rows.":
        "第 {first}–{last} 场，共 {total} 场，按赛程顺序，每页 {per_page} 场；按列排序只对本页的行排序。",
    "Filter by entry": "按参赛者筛选", "Only one entry's matches": "只看一位参赛者的比赛", "Winner": "胜方",
    "top": "顶部", "bottom": "底部", "Pro": "正方", "Con": "反方", "Score (PRO–CON)": "比分（正方–反方）",
    "{side} forfeit": "{side} 弃权",
    # the matrix page
    "Each cell is the model's probability that the row entry beats the column entry (blue above 0.5, red below; the "
    "scale is under the chart); hover or tap a cell for the observed score share and the number of matches.":
        "每格为模型预测的行参赛者战胜列参赛者的概率（高于 0.5 为蓝，低于为红；色阶见图下方）；悬停或轻触格子可查看实际得分率与比赛场数。",
    # methodology
    "The match": "比赛", "Options": "选项", "(ratings)": "（计分）", "Ratings": "评分", "The Pro side": "正方持方",
    "Intervals and ranks": "区间与排名", "Provisional ratings": "暂定评分", "Simulation": "模拟",
    # a motion
    "language {language}": "语言 {language}", "Side balance": "持方平衡",
    "PRO {pro} – CON {con} points from judge {judge}: PRO share {share}%.":
        "评委 {judge} 给出的得分：正方 {pro} – 反方 {con}：正方占 {share}%。",
    # charts and judge labels (leaderboard/site/svg.py, leaderboard/site/render.py)
    "Predicted win probability, row against column": "预测胜率：行对列",
    "{row} vs {column}: predicted {p}; {seen}": "{row} 对 {column}：预测 {p}；{seen}",
    "observed share {share} over {n} matches": "{n} 场比赛中实际得分率 {share}", "never met": "未曾交手",
    "P(row beats column)": "P（行胜列）",
    "{entry}: {rating} (95% CI {low}–{high})": "{entry}：{rating}（95% 置信区间 {low}–{high}）",
    "Ratings with 95% intervals after each number of matches": "各比赛场数后的评分及 95% 区间",
    "matches": "比赛场数", "{entry}: {rating} (95% CI {low}–{high}) after {n} matches":
        "{entry}：{n} 场比赛后 {rating}（95% 置信区间 {low}–{high}）",
    "imported from {source}": "导入自 {source}", "elsewhere": "别处",
    "Human-Elo ({n} person)": "Human-Elo（{n} 人）", "Human-Elo ({n} people)": "Human-Elo（{n} 人）",
    "jury of {size} drawn from {pool} models": "从 {pool} 个模型中抽取 {size} 位评委",
    # the ballots of people (arena serve: arena/app/templates, arena/app/people/web.py, arena/domain/ballots.py)
    "Debate Arena ballots": "Debate Arena 评判", "Your ballots": "你的评判",
    "Your ballot on “{motion}” is saved.": "你对“{motion}”的评判已保存。", "Judge the next debate": "评判下一场辩论",
    "You have judged every debate.": "你已评判了全部辩论。",
    "{todo} to judge · {cast} cast · {total} debate in all": "待评判 {todo} 场 · 已评判 {cast} 场 · 共 {total} 场辩论",
    "{todo} to judge · {cast} cast · {total} debates in all": "待评判 {todo} 场 · 已评判 {cast} 场 · 共 {total} 场辩论",
    "Read each debate and say who won, overall and on argument, source and language, with a few words on why. The "
    "sides are shown only as PRO (for the motion) and CON (against it). You can revise a ballot until the ballots "
    "are closed.":
        "读完每场辩论后，判断哪一方获胜：总体上如何，在论证、来源和语言上又各自如何，并用几句话说明理由。双方只以 PRO（支持"
        "辩题）和 CON（反对辩题）标示。在评判关闭之前，你可以修改已提交的评判。",
    "To judge": "待评判", "to judge": "待评判", "Cast": "已评判", "cast": "已评判", "(open one to revise it)": "（打开即可修改）",
    "No debate is finished yet: come back later.": "还没有辩论结束，请稍后再来。",
    "Ballot": "评判", "← Your ballots": "← 你的评判", "PRO argues": "PRO 方主张", "CON argues": "CON 方主张",
    "Your ballot is not saved yet.": "你的评判尚未保存。",
    "You have cast a ballot on this debate: change it below and save to revise it.":
        "你已评判过这场辩论：在下方修改并保存，即可更新评判。",
    "This speech was cut off at its length limit.": "这篇发言在长度上限处被截断。", "Your ballot": "你的评判",
    "Who won the debate?": "哪一方赢得了这场辩论？", "Your overall verdict.": "你的总体判断。", "Tie": "平局",
    "Why? A few sentences on what decided it": "理由：用几句话说明是什么决定了胜负",
    "Save the revised ballot": "保存修改后的评判", "Cast ballot": "提交评判",
    "Bad request": "请求有误", "The request could not be read as a ballot.": "无法把这个请求读作一份评判。",
    "Form expired": "表单已过期",
    "This form is out of date or did not come from its page. Go back, reload the page and cast your ballot again.":
        "这个表单已经过期，或者并非来自它所在的页面。请返回、刷新页面，然后重新提交评判。",
    "Not found": "未找到", "There is nothing here.": "这里什么也没有。", "Not allowed": "不允许",
    "This page cannot be used that way.": "这个页面不能这样使用。", "Ballots closed": "评判已关闭",
    "The organisers have closed these ballots: no more ballots are taken. Thank you.":
        "组织者已关闭这些评判，不再接受新的评判。谢谢！",
    "Too long": "内容过长", "A ballot is at most {size} KB; shorten the rationale and try again.":
        "一份评判最多 {size} KB；请缩短理由后重试。",
    "Server error": "服务器错误", "Something went wrong; try again.": "出了点问题，请重试。",
    "missing: choose pro, con or tie": "未选择：请选择 PRO、CON 或平局",
    "expected pro, con or tie, got {value}": "应为 PRO、CON 或平局，收到的是 {value}",
    "missing: say in a few words why": "未填写：请用几句话说明理由",
    "{length} characters; at most {most}": "共 {length} 个字符，最多 {most} 个",
    "a name that is not UTF-8 (byte {at})": "字段名不是 UTF-8 文本（第 {at} 字节）",
    "not UTF-8 text (byte {at} of the value)": "不是 UTF-8 文本（值的第 {at} 字节）",
    # debaters (arena serve: the turns of people who debate on the web, arena/app/templates, arena/app/people/web.py)
    "Debate Arena debates": "Debate Arena 辩论", "Your debates": "你的辩论", "← Your debates": "← 你的辩论",
    "draft saved": "草稿已保存", "Your speech in “{motion}” is submitted.": "你在“{motion}”中的发言已提交。",
    "The debate goes on when the organisers next run the arena; your next turn, if any, will appear here then.":
        "组织者下次运行赛场时，辩论将继续进行；届时如果轮到你发言，会在这里显示。",
    "Each item below is a turn of yours in a debate. Open it to read the motion and what has been said so far, then "
    "write your speech: save drafts as you go, and submit it before its deadline. A submitted speech cannot be "
    "changed.":
        "下面每一项都是你在一场辩论中的一次发言。打开后可以阅读辩题和此前的发言，然后撰写你的发言：写作中可以随时保存草稿，"
        "并在截止时间前提交。发言一经提交便不能修改。",
    "To write": "待撰写", "due": "截止于", "Submitted": "已提交", "(open one to read it)": "（打开即可阅读）",
    "submitted": "提交于", "Deadline passed": "已过截止时间", "was due": "截止于",
    "No turn of yours has come up yet: come back later.": "还没有轮到你发言，请稍后再来。",
    "Debate {n}": "第 {n} 场辩论", "Results": "结果", "you argued {side}": "你是 {side} 方",
    "Its result is held back while people still judge it.": "评委仍在评判这场辩论，结果暂不公布。",
    "You lost: your side forfeited, as a speech was missing or not taken.": "你输了：你方有发言缺失或未被接受，判为弃权。",
    "You won: the other side forfeited.": "你赢了：对方弃权。",
    "Not judged yet: its result will appear here.": "尚未评判：结果将显示在这里。",
    "Judge {judge}: a tie, {votes}.": "评委 {judge}：平局，{votes}。",
    "Judge {judge}: you won, {votes}.": "评委 {judge}：你赢了，{votes}。",
    "Judge {judge}: you lost, {votes}.": "评委 {judge}：你输了，{votes}。", "Why": "理由",
    "Your speech": "你的发言", "Your turn: {stage} · {side}": "轮到你发言：{stage} · {side}",
    "{side}: you argue “{proposition}”.": "你是 {side} 方：你主张“{proposition}”。",
    "PRO: you argue for the motion.": "你是 PRO 方：你支持辩题。",
    "CON: you argue against the motion.": "你是 CON 方：你反对辩题。", "Stage": "环节",
    "{stage}, turn {k} of {n} of the debate": "{stage}，全场第 {k} 次发言（共 {n} 次）", "What it is for": "本环节的任务",
    "Length": "篇幅", "{amount} characters; a speech under {least} or over {most} characters is not taken.":
        "{amount} 字；不足 {least} 字或超过 {most} 字的发言不予接受。",
    "{amount} words; a speech under {least} or over {most} words is not taken.":
        "{amount} 词；不足 {least} 词或超过 {most} 词的发言不予接受。",
    "Deadline": "截止时间", "What you are shown": "你能看到的内容",
    "Both sides write this stage's speeches independently: you see the other side's only after both are in.":
        "本环节双方各自独立撰写发言：双方都提交后，你才能看到对方的发言。",
    "(your side)": "（我方）", "No speech is shown to you before yours.": "在你发言之前，没有可供你阅读的发言。",
    "No speech comes before yours: you open the debate.": "你之前没有发言：由你开启这场辩论。",
    "You submitted this speech on {time}. A submitted speech cannot be changed.":
        "你已于 {time} 提交这篇发言。发言一经提交便不能修改。",
    "The deadline of this speech has passed, or the debate went on without it: it is no longer taken.":
        "这篇发言的截止时间已过，或辩论已在没有它的情况下继续进行，不再接受提交。",
    "Your speech is not submitted yet.": "你的发言尚未提交。",
    "Your draft is saved ({time}). Come back to it any time before the deadline.":
        "你的草稿已保存（{time}）。截止时间之前可以随时回来继续撰写。",
    "{n} of {amount} characters": "已写 {n} 字，共 {amount} 字", "{n} of {amount} words": "已写 {n} 词，共 {amount} 词",
    "Save draft": "保存草稿", "Submit speech": "提交发言",
    "Save a draft as often as you like. Submit once, when the speech is done: a submitted speech cannot be changed.":
        "草稿可以随时保存，次数不限。发言完成后再提交，只能提交一次：发言一经提交便不能修改。",
    "The request could not be read as a speech.": "无法把这个请求读作一篇发言。",
    "This form is out of date or did not come from its page. Go back, copy what you wrote, reload the page, paste it "
    "in and send it again.":
        "这个表单已经过期，或者并非来自它所在的页面。请返回并复制你写的内容，刷新页面，粘贴后重新提交。",
    "Already submitted": "已经提交", "A submitted speech cannot be changed.": "发言一经提交便不能修改。",
    "A speech is at most {size} KB; shorten it and try again.": "一篇发言最多 {size} KB；请缩短后重试。",
    "Too slow": "传输过慢",
    "The form took too long to arrive, and nothing of it was stored. Go back and send it again.":
        "表单传输时间过长，内容均未保存。请返回后重新提交。",
    "Your speech took too long to arrive, and nothing of it was stored. Go back, copy what you wrote, reload the page, "
    "paste it in and send it again.":
        "你的发言传输时间过长，内容均未保存。请返回并复制你写的内容，刷新页面，粘贴后重新提交。",
    "It is {amount} characters long; this turn takes at most {most}.": "发言有 {amount} 字；本次发言最多 {most} 字。",
    "It is {amount} words long; this turn takes at most {most}.": "发言有 {amount} 词；本次发言最多 {most} 词。",
    "It is a placeholder or filler where the speech should be: write the speech itself.":
        "这是占位文字或填充内容，而不是发言：请写出发言本身。",
    "It holds a blank to fill in (such as [Insert rebuttal here]) in place of the speech: write the speech itself.":
        "发言里是待填写的空白（例如 [Insert rebuttal here]），而不是发言本身：请写出发言本身。",
    "Most of it is copied from what you were shown or from your own earlier speech, even where words are changed: "
    "write it in your own words.":
        "其中大部分照抄了你看到的内容或你自己之前的发言（即使改动了个别字词）：请用自己的话来写。",
    "It speaks to the judge instead of debating (a verdict, chat markup or an instruction to the judge): argue your "
    "case, and ask the judges for their vote in your own words.":
        "这段文字是在对裁判下指令，而不是在辩论（伪造的裁决、对话标记或给裁判的指令）：请论证你的观点，并用自己的话请评委投票。",
    "It is the page you were shown, pasted in: write your own speech.": "这是把你看到的页面整页粘贴进来：请写你自己的发言。",
    "It reads as words without sentences: write it in whole sentences.": "这只是一串词语，没有成句：请用完整的句子来写。",
    "Most of it repeats one sentence or phrase: say more than that.": "其中大部分在重复同一句话或同一个短语：请说出更多内容。",
    "It is not in the debate's language: write it in that language.": "发言没有使用本场辩论的语言：请改用该语言撰写。",
    "It is {amount} characters long; this turn takes at least {least}.": "发言只有 {amount} 字；本次发言至少需要 {least} 字。",
    "It is {amount} words long; this turn takes at least {least}.": "发言只有 {amount} 词；本次发言至少需要 {least} 词。",
    "It does not pass the arena's checks of a speech.": "发言未通过赛场对发言的检查。",
}

CATALOGUE: dict[str, dict[str, str]] = {"zh": ZH}


def table(language: str) -> dict[str, str]:
    """The catalogue of a language code ("zh", "zh-Hans": zh's); English and languages without one, empty."""
    return CATALOGUE.get(language.split("-")[0].lower(), {})


def translator(language: str) -> Callable[..., Markup]:
    """The templates' filter t, `"message" | t(name=value)`: the message in language (else English), escaped, its
    values escaped and filled in; each message is looked up and escaped once per translator (one per publish)."""
    ready: dict[str, Markup]
    messages, ready = table(language), {}

    def translate(message: str, **values: Any) -> Markup:
        text = ready.get(message)
        if text is None:
            text = ready[message] = _markup(messages.get(message, message))
        if not values:
            return text
        # str.format of escaped values: several times faster than Markup.format, and the same text
        return Markup(str.format(text, **{name: escape(value) for name, value in values.items()}))
    return translate


def _markup(text: str) -> Markup:
    """A catalogue's text made safe as markup, apostrophes left as they are (they read as such in the page source,
    and no attribute of the site is quoted with them)."""
    return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;"))


def plain(language: str) -> Callable[..., str]:
    """t(message, **values) for code that escapes for itself (the charts): the message in language, unescaped."""
    messages = table(language)
    return lambda message, **values: messages.get(message, message).format(**values)


def words(language: str) -> Callable[[Any], Any]:
    """word(value): a value that reads as a word (WORDS) in language; any other value as it is."""
    known = {w: table(language)[w] for w in WORDS if w in table(language)}
    return lambda value: known.get(value, value) if isinstance(value, str) else value
